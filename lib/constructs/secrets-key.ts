/**
 * The stack's KMS key for endpoint signing secrets (docs/architecture.md#secrets):
 * envelope encryption, so only data keys cross the wire. Grants are split by
 * purpose: the functions that mint secrets may only generate data keys (seal),
 * the dispatcher may only decrypt them (open); no function may do both, and
 * every grant is bound to the sealer's encryption context.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { ENV, KMS_ENCRYPTION_CONTEXT } from '#lambdas/contract/deployment';

/** Properties of a {@link SecretsKey}. */
export interface SecretsKeyProps {
  /** As the table's: a retained table needs its key to read its secrets. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
}

/** The KMS key sealing signing secrets, and its two grants. */
export class SecretsKey extends Construct {
  /** The customer-managed key (yearly automatic rotation). */
  readonly key: Key;

  constructor(scope: Construct, id: string, props: SecretsKeyProps = {}) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Seals webhook endpoint signing secrets (envelope encryption)',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
  }

  /** The environment a granted function needs. */
  get environment(): Record<string, string> {
    return { [ENV.SECRETS_KEY_ID]: this.key.keyArn };
  }

  /** Seal only: `kms:GenerateDataKey` under the sealer's encryption context (the functions minting secrets). */
  grantSeal(grantee: IGrantable): Grant {
    return this.grantWithContext(grantee, 'kms:GenerateDataKey');
  }

  /** Open only: `kms:Decrypt` under the sealer's encryption context (the dispatcher). */
  grantOpen(grantee: IGrantable): Grant {
    return this.grantWithContext(grantee, 'kms:Decrypt');
  }

  private grantWithContext(grantee: IGrantable, action: string): Grant {
    return Grant.addToPrincipalOrResource({
      grantee,
      actions: [action],
      resourceArns: [this.key.keyArn],
      resource: this.key,
      conditions: {
        StringEquals: Object.fromEntries(Object.entries(KMS_ENCRYPTION_CONTEXT).map(([k, v]) => [`kms:EncryptionContext:${k}`, v])),
      },
    });
  }
}
