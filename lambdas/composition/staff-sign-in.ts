/**
 * The runtime of the two staff sign-in functions (docs/behaviour.md#staff-sign-in): the
 * container's runtime with the stage's identity provider added. Kept out of the shared runtime so
 * the ID token verifier (and `jose`) is in these two bundles only.
 */
import { ENV } from '../contract/deployment';
import { parseConsoleOidc } from '../contract/console-oidc';
import { idTokenVerifier } from '../identity/id-token-verifier';
import { providerDiscovery } from '../identity/oidc-discovery';
import type { ConsoleOidcDeps, SurfaceRuntime } from '../operations/context';
import { defaultRuntime, logger } from './runtime';

/**
 * Staff sign-in from `CONSOLE_OIDC` (the stage's `consoleOidc` as JSON, parsed by the setting's one
 * parser; a loopback issuer only where `ALLOW_LOOPBACK_TARGETS` is `true`): its settings and the
 * verifier of its provider's ID tokens, whose discovery and keys are cached for the container's
 * life. Unset: none (the sign-in routes answer 404). Unreadable: none, logged (the stack validates
 * the setting before it deploys).
 */
function consoleOidcFromEnv(env: NodeJS.ProcessEnv): { consoleOidc?: ConsoleOidcDeps } {
  const raw = env[ENV.CONSOLE_OIDC];
  if (!raw) return {};
  const problems: string[] = [];
  let settings = null;
  try {
    settings = parseConsoleOidc(JSON.parse(raw), problems, env[ENV.ALLOW_LOOPBACK_TARGETS] === 'true');
  } catch (error) {
    problems.push(`not JSON: ${(error as Error).message}`);
  }
  if (!settings) {
    logger.error('CONSOLE_OIDC is unreadable: staff sign-in is off', { problems });
    return {};
  }
  return {
    consoleOidc: {
      settings,
      verifyIdToken: idTokenVerifier(settings, providerDiscovery(settings.issuer)),
      log: (message, fields) => logger.info(message, fields),
    },
  };
}

let memo: { base: SurfaceRuntime; runtime: SurfaceRuntime } | undefined;

/**
 * The container's runtime with `consoleOidc` from the environment, built once per runtime (the
 * provider's discovery and keys are then cached for the container's life; `useAdapters` starts over).
 */
export function staffSignInRuntime(): SurfaceRuntime {
  const base = defaultRuntime();
  if (memo?.base !== base) memo = { base, runtime: { ...base, deps: { ...base.deps, ...consoleOidcFromEnv(process.env) } } };
  return memo.runtime;
}
