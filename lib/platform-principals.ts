/**
 * The stage setting `platformPrincipals` (docs/deploy.md#platform-api): the IAM principals allowed
 * to call the platform API. Each is an IAM role or user ARN (or an account's root), as the
 * condition key `aws:PrincipalArn` reads it: a role's sessions all carry the role's ARN there.
 */

/** An IAM role, user or account root ARN, in any partition. */
const PRINCIPAL_ARN = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:(?:root|(?:role|user)\/[\w+=,.@/-]{1,512})$/;

/** The most principals the resource policy names (its size stays far under API Gateway's limit). */
const MAX_PLATFORM_PRINCIPALS = 20;

/** Parses the setting: a JSON array or a comma-separated list of ARNs; problems are pushed to `problems`. */
export function parsePlatformPrincipals(value: unknown, problems: string[]): readonly string[] {
  let list: unknown = value;
  if (typeof value === 'string') {
    try {
      list = value.trim().startsWith('[')
        ? JSON.parse(value)
        : value
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '');
    } catch {
      list = null;
    }
  }
  if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
    problems.push('platformPrincipals must be a list of IAM role or user ARNs such as ["arn:aws:iam::123456789012:role/platform-backend"]');
    return [];
  }
  if (list.length > MAX_PLATFORM_PRINCIPALS)
    problems.push(`platformPrincipals takes at most ${MAX_PLATFORM_PRINCIPALS} ARNs (got ${list.length})`);
  for (const arn of list) {
    if (!PRINCIPAL_ARN.test(arn))
      problems.push(
        `platformPrincipals: ${JSON.stringify(arn)} is not an IAM role or user ARN (arn:aws:iam::<account>:role/<name>, …:user/<name> or …:root; an assumed-role session is allowed through its role's ARN)`,
      );
  }
  return [...new Set(list)];
}
