/**
 * `npm run smoke`: checks a deployed (or local) stack end to end through its
 * public REST API: a throwaway endpoint, a test event delivered with its
 * evidence, the endpoint deleted again. Exit 0 when every step passed, 1 when
 * one failed (named on the last line), 2 for a bad command line.
 */
import { parseArgs } from 'node:util';
import { isLoopbackUrl, runSmoke } from './smoke/run-smoke';

const HELP = `Usage: npm run smoke -- --api <url> --token <token> --workspace <slug> [options]
  --api <url>           base URL of the REST API (the stack's ApiUrl output; http://127.0.0.1:3000 locally)
  --token <token>       an API token of the workspace with write scope (whk_…)
  --workspace <slug>    the token's workspace
  --receiver <url>      where the throwaway endpoint points (an https URL that answers 2xx to a POST);
                        without it the smoke test runs its own receiver on 127.0.0.1, which only the
                        local stack may deliver to, and verifies the signature with the endpoint's secret
  --timeout <seconds>   how long to wait for the delivery (default 60)
  --help                this text`;

/** Thrown for a bad command line: printed with the usage, exit 2. */
class UsageError extends Error {}

function parseUrl(raw: string, flag: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    return raw;
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, got "${raw}"`);
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      api: { type: 'string' },
      token: { type: 'string' },
      workspace: { type: 'string' },
      receiver: { type: 'string' },
      timeout: { type: 'string', default: '60' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const missing = (['api', 'token', 'workspace'] as const).filter((k) => !values[k]);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((k) => `--${k}`).join(', ')}`);
  const apiUrl = parseUrl(values.api!, '--api');
  const receiverUrl = values.receiver === undefined ? undefined : parseUrl(values.receiver, '--receiver');
  if (receiverUrl === undefined && !isLoopbackUrl(apiUrl)) {
    throw new UsageError(
      '--receiver is required: a deployed stack delivers only to public https URLs, so the smoke test cannot use a receiver of its own',
    );
  }
  const timeout = Number(values.timeout);
  if (values.timeout.trim() === '' || !Number.isFinite(timeout) || timeout <= 0)
    throw new UsageError(`--timeout must be a number of seconds > 0, got "${values.timeout}"`);

  const result = await runSmoke({
    apiUrl,
    token: values.token!,
    workspace: values.workspace!,
    ...(receiverUrl !== undefined ? { receiverUrl } : {}),
    timeoutMs: timeout * 1000,
    log: (line) => console.log(line),
  });
  return result.ok ? 0 : 1;
}

main()
  .then((code) => process.exit(code))
  .catch((e: unknown) => {
    if (e instanceof UsageError || (e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${e instanceof Error ? e.message : String(e)}\n\n${HELP}`);
      process.exit(2);
    }
    console.error(`npm run smoke failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
