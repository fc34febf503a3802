/**
 * Staff sign-in to the console with OpenID Connect (docs/behaviour.md#staff-sign-in), zod-free so
 * the CDK app, the local stack and every function may import it: the `consoleOidc` stage setting,
 * its parser (one home for its rules), and the numbers of staff sessions and sign-in nonces.
 */
import { LAMBDA_ENVIRONMENT_BYTES } from './aws-limits';

/** A staff role, lowest first: each grants the workspace scope bundle of the same name on every workspace. */
export const STAFF_ROLES = ['read', 'write', 'admin'] as const;

/** A staff role. */
export type StaffRole = (typeof STAFF_ROLES)[number];

/** The `consoleOidc` stage setting: the identity provider the platform's staff sign in with. */
export interface ConsoleOidcSettings {
  /** The issuer, exactly as the provider's ID tokens carry it in `iss` (https; discovery is `<issuer>/.well-known/openid-configuration`). */
  readonly issuer: string;
  /** The console's client id at the provider: a public client (Authorization Code with PKCE, no secret). ID tokens must carry it in `aud`. */
  readonly clientId: string;
  /**
   * The ID token claim that lists the person's groups.
   * @default 'groups'
   */
  readonly groupsClaim: string;
  /** The groups of each role; a person gets the highest role any of their groups is listed under. */
  readonly roles: Readonly<Record<StaffRole, readonly string[]>>;
  /**
   * True lets the token's `email` name the person even when `email_verified` is not true
   * (for providers that only issue verified addresses and omit the claim).
   * @default false
   */
  readonly trustEmailFromIssuer: boolean;
  /**
   * The scopes the console asks for; `openid` must be one. Some providers put the groups claim in
   * the ID token only when a scope asks for it (Okta's `groups`, for one).
   * @default ['openid', 'email', 'profile']
   */
  readonly scopes: readonly string[];
  /**
   * The provider's name on the sign-in button ("Sign in with <name>").
   * @default the issuer's host name
   */
  readonly name: string;
}

/** The `name` of the console page's `<meta>` tag that carries {@link ConsoleOidcTag} (docs/console.md#staff-sign-in). */
export const CONSOLE_OIDC_META_NAME = 'console-oidc';

/**
 * What the console page tells the console of the stage's provider (the meta tag's JSON; present only
 * when the stage has `consoleOidc` and the provider's discovery answered): public facts only, no
 * secret, since the console is a public client.
 */
export interface ConsoleOidcTag {
  /** The provider's name on the button ("Sign in with <name>"). */
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  /** The console's address exactly as registered at the provider (the stack's `ConsoleOidcRedirectUri`): it comes back here with `?code&state`. */
  readonly redirectUri: string;
}

/** How long a staff session lasts, in seconds (renewed only by signing in again). */
export const STAFF_SESSION_TTL_SECONDS = 3600;

/** How long a sign-in nonce can be used, in seconds (once). */
export const CONSOLE_NONCE_TTL_SECONDS = 600;

/** Most groups one role may list. */
const MAX_GROUPS_PER_ROLE = 50;

/**
 * Most bytes the setting may take as JSON: the functions carry it as `CONSOLE_OIDC`, and Lambda
 * allows 4 KB of environment in all ({@link LAMBDA_ENVIRONMENT_BYTES}); half is left to the others.
 */
const MAX_SETTING_BYTES = LAMBDA_ENVIRONMENT_BYTES / 2;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True for an https URL (or http on a loopback host when `allowLoopback`), with no query or fragment. */
function isIssuerUrl(value: string, allowLoopback: boolean): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.search || url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  return allowLoopback && url.protocol === 'http:' && loopback;
}

/**
 * Parses the `consoleOidc` setting (the stage file's value, or the `CONSOLE_OIDC` environment
 * variable's JSON parsed): null when absent (`undefined` or `null`: staff sign-in is off), else the
 * settings with their defaults. Each fault is pushed to `problems` (then the result is null).
 * `allowLoopback` accepts an `http://localhost` issuer (the local stack and tests only).
 */
export function parseConsoleOidc(raw: unknown, problems: string[], allowLoopback = false): ConsoleOidcSettings | null {
  if (raw === undefined || raw === null) return null;
  const before = problems.length;
  if (!isRecord(raw)) {
    problems.push(
      'consoleOidc must be an object {issuer, clientId, groupsClaim?, roles: {read, write, admin}, trustEmailFromIssuer?, name?}',
    );
    return null;
  }
  const known = new Set(['issuer', 'clientId', 'groupsClaim', 'roles', 'trustEmailFromIssuer', 'scopes', 'name']);
  for (const key of Object.keys(raw)) if (!known.has(key)) problems.push(`consoleOidc has an unknown key "${key}"`);
  const { issuer, clientId, groupsClaim, roles, trustEmailFromIssuer, scopes, name } = raw;
  if (typeof issuer !== 'string' || !isIssuerUrl(issuer, allowLoopback))
    problems.push(
      `consoleOidc.issuer must be the provider's https issuer URL exactly as its tokens' "iss" (got ${JSON.stringify(issuer)})`,
    );
  if (typeof clientId !== 'string' || clientId.trim() === '' || clientId.length > 255)
    problems.push('consoleOidc.clientId must be the console client id registered at the provider');
  if (groupsClaim !== undefined && (typeof groupsClaim !== 'string' || groupsClaim.trim() === '' || groupsClaim.length > 255))
    problems.push('consoleOidc.groupsClaim must be the name of the ID token claim listing groups');
  if (trustEmailFromIssuer !== undefined && typeof trustEmailFromIssuer !== 'boolean')
    problems.push('consoleOidc.trustEmailFromIssuer must be true or false');
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) ||
      scopes.length > 20 ||
      !scopes.every((x) => typeof x === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(x)) ||
      !scopes.includes('openid'))
  )
    problems.push('consoleOidc.scopes must be a list of at most 20 scope names, "openid" among them');
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 60))
    problems.push('consoleOidc.name must be a provider name of 1 to 60 characters');
  const parsedRoles: Record<StaffRole, string[]> = { read: [], write: [], admin: [] };
  if (!isRecord(roles)) problems.push('consoleOidc.roles must be an object {read: [groups], write: [groups], admin: [groups]}');
  else {
    for (const key of Object.keys(roles))
      if (!(STAFF_ROLES as readonly string[]).includes(key))
        problems.push(`consoleOidc.roles has an unknown role "${key}" (read, write, admin)`);
    for (const role of STAFF_ROLES) {
      const list = roles[role] ?? [];
      if (
        !Array.isArray(list) ||
        list.length > MAX_GROUPS_PER_ROLE ||
        !list.every((g) => typeof g === 'string' && g.trim() !== '' && g.length <= 255)
      )
        problems.push(`consoleOidc.roles.${role} must be a list of at most ${MAX_GROUPS_PER_ROLE} group names`);
      else parsedRoles[role] = [...(list as string[])];
    }
    if (STAFF_ROLES.every((r) => parsedRoles[r].length === 0)) problems.push('consoleOidc.roles must list at least one group');
  }
  if (problems.length > before) return null;
  const settings: ConsoleOidcSettings = {
    issuer: issuer as string,
    clientId: clientId as string,
    groupsClaim: (groupsClaim as string | undefined) ?? 'groups',
    roles: parsedRoles,
    trustEmailFromIssuer: (trustEmailFromIssuer as boolean | undefined) ?? false,
    scopes: (scopes as string[] | undefined) ?? ['openid', 'email', 'profile'],
    name: (name as string | undefined) ?? new URL(issuer as string).hostname,
  };
  const bytes = new TextEncoder().encode(JSON.stringify(settings)).length;
  if (bytes > MAX_SETTING_BYTES) {
    problems.push(
      `consoleOidc takes ${bytes} bytes as JSON, over the ${MAX_SETTING_BYTES} it may (the functions carry it as an environment variable, and Lambda allows 4 KB of those in all): list fewer or shorter groups`,
    );
    return null;
  }
  return settings;
}

/**
 * The role a person's groups give (docs/behaviour.md#staff-sign-in): the highest role one of whose
 * groups they are in, or null (403 `NoConsoleAccess`).
 */
export function staffRoleOf(settings: Pick<ConsoleOidcSettings, 'roles'>, groups: readonly string[]): StaffRole | null {
  const held = new Set(groups);
  for (const role of [...STAFF_ROLES].reverse()) if (settings.roles[role].some((g) => held.has(g))) return role;
  return null;
}
