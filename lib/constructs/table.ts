/**
 * The service's one DynamoDB table (docs/architecture.md#table-and-indexes), created from the shared key
 * schema in lambdas/store/table-schema.ts, with grants that name exactly the
 * actions and keys each kind of function needs.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { RateLimitBucket } from '../../lambdas/contract/rate-limits';
import { INDEXES, keys, TABLE } from '../../lambdas/store/table-schema';

/**
 * Item actions of a function that only reads. No Scan: every access pattern is
 * a Query (docs/architecture.md#access-patterns); no DescribeTable or stream actions: the code uses none.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/**
 * Item actions of a function that writes. Transactions need no action of their
 * own: IAM checks each item's Put/Update/Delete/ConditionCheck inside them.
 */
export const TABLE_WRITE_ACTIONS = [
  ...TABLE_READ_ACTIONS,
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/** Properties of a {@link ServiceTable}. */
export interface ServiceTableProps {
  /**
   * What happens to the table when the stack is deleted. RETAIN also turns on
   * deletion protection, so the table cannot be deleted by accident either.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The table: on-demand, point-in-time recovery, TTL on the schema's TTL
 * attribute, and every GSI of the schema with its projection (gsi1 all
 * attributes; the retention and repair indexes keys only; the delivery log
 * keys and its filter attributes).
 */
export class ServiceTable extends Construct {
  /** The table. */
  readonly table: Table;

  constructor(scope: Construct, id: string, props: ServiceTableProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });
    for (const gsi of INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.name,
        partitionKey: { name: gsi.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType[gsi.projection],
        ...('nonKeyAttributes' in gsi ? { nonKeyAttributes: [...gsi.nonKeyAttributes] } : {}),
      });
    }
  }

  /**
   * The table and each of its indexes by name; no `index/*` wildcard, so a
   * later index is not readable until it is added here.
   */
  private itemResources(): string[] {
    return [this.table.tableArn, ...INDEXES.map((g) => `${this.table.tableArn}/index/${g.name}`)];
  }

  /** Lets a function read items (Get, BatchGet, Query on the table and its indexes). */
  grantReadItems(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: [...TABLE_READ_ACTIONS], resourceArns: this.itemResources() });
  }

  /** Lets a function read and write items (no table-level actions). */
  grantReadWriteItems(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: [...TABLE_WRITE_ACTIONS], resourceArns: this.itemResources() });
  }

  /**
   * Lets a function count requests in one rate-limit bucket: UpdateItem, only on
   * items whose partition key is that bucket's (`RL#<bucket>#…`, from the
   * schema's key builder). A read-only operation gets no other write.
   */
  grantRateLimitCounter(grantee: iam.IGrantable, bucket: RateLimitBucket): iam.Grant {
    return this.grantOnLeadingKeys(grantee, ['dynamodb:UpdateItem'], keys.rateLimit(bucket, '*', 0).pk);
  }

  /**
   * Lets the authorizer look a token up by hash: GetItem, only on the
   * `TOKENHASH#…` items (from the schema's key builder).
   */
  grantTokenLookup(grantee: iam.IGrantable): iam.Grant {
    return this.grantOnLeadingKeys(grantee, ['dynamodb:GetItem'], keys.tokenHash('*').pk);
  }

  private grantOnLeadingKeys(grantee: iam.IGrantable, actions: string[], leadingKeyPattern: string): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [leadingKeyPattern] } },
    });
  }
}
