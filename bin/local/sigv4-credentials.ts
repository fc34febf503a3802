/**
 * The local stack's stand-in for IAM on the platform routes (docs/architecture.md#route-kinds):
 * two key pairs, one of a principal the stage allows and one of a principal it does not, written
 * to `.local/stack.json` so the platform's backend signs here with the same SDK code as on AWS;
 * and the check API Gateway makes (the signature, then the resource policy's explicit deny).
 */
import { randomBytes } from 'node:crypto';
import type { PlatformAuthenticator } from './http-front';
import { verifySigV4, type SigV4Credential } from './sigv4-verifier';

/** The region the local platform API's signatures are scoped to. */
const LOCAL_PLATFORM_REGION = 'us-east-1';

/** The IAM principals the local key pairs stand for (the local stage allows the first only). */
const LOCAL_PRINCIPALS = {
  platform: 'arn:aws:iam::000000000000:user/local-platform-backend',
  other: 'arn:aws:iam::000000000000:user/local-other',
} as const;

/** A key pair as `.local/stack.json` shows it: what an SDK's credentials and signer need. */
interface StackCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
}

/** The local platform API's key pairs. */
export interface LocalPlatformAccess {
  /** Of the allowed principal. */
  readonly platformCredentials: StackCredentials;
  /** Valid, of a principal the stage does not allow: 403. */
  readonly otherCredentials: StackCredentials;
  /** The allowed principal's ARN. */
  readonly platformPrincipalArn: string;
}

function isStackCredentials(value: unknown): value is StackCredentials {
  const v = value as Partial<StackCredentials> | null;
  return (
    typeof v?.accessKeyId === 'string' &&
    typeof v.secretAccessKey === 'string' &&
    v.region === LOCAL_PLATFORM_REGION &&
    /^AKIA[A-Z0-9]{16}$/.test(v.accessKeyId)
  );
}

function newKeyPair(): StackCredentials {
  const id = randomBytes(10).toString('hex').toUpperCase().slice(0, 16);
  return { accessKeyId: `AKIA${id}`, secretAccessKey: randomBytes(30).toString('base64'), region: LOCAL_PLATFORM_REGION };
}

/**
 * The key pairs of a previous run (from its stack.json, so a backend configured with them keeps
 * working across restarts), or new ones.
 */
export function localPlatformAccess(saved?: { platformCredentials?: unknown; otherCredentials?: unknown }): LocalPlatformAccess {
  const platformCredentials = isStackCredentials(saved?.platformCredentials) ? saved.platformCredentials : newKeyPair();
  const otherCredentials = isStackCredentials(saved?.otherCredentials) ? saved.otherCredentials : newKeyPair();
  return { platformCredentials, otherCredentials, platformPrincipalArn: LOCAL_PRINCIPALS.platform };
}

/**
 * API Gateway's check of a platform route: a valid SigV4 signature of a known key (else 403 with
 * its message), then the resource policy, whose explicit deny refuses every principal not in
 * `allowed`.
 */
export function localPlatformAuthenticator(access: LocalPlatformAccess, now?: () => Date): PlatformAuthenticator {
  const credentials: SigV4Credential[] = [
    { ...access.platformCredentials, principalArn: LOCAL_PRINCIPALS.platform },
    { ...access.otherCredentials, principalArn: LOCAL_PRINCIPALS.other },
  ];
  const allowed = new Set([access.platformPrincipalArn]);
  return (request) => {
    const verdict = verifySigV4(request, { region: LOCAL_PLATFORM_REGION, credentials, ...(now ? { now } : {}) });
    if (!verdict.ok) return { refused: verdict.reason };
    if (!allowed.has(verdict.principalArn))
      return {
        refused: `User: ${verdict.principalArn} is not authorized to perform: execute-api:Invoke on this resource with an explicit deny`,
      };
    return { principalArn: verdict.principalArn };
  };
}
