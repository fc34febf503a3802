/**
 * `npm run receiver`: a demo webhook receiver on this machine. It verifies
 * signatures with the `standardwebhooks` library, dedupes on `webhook-id`
 * and prints one line per request; `--fail-rate` (or typing `f`) makes it
 * fail requests so the service's retries show up.
 */
import { createInterface, type Interface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ReceiverConfigError, startReceiver, type Receiver } from './local/receiver-server';
import { stopOnSignals } from './local/stop-on-signals';

const HELP = `Usage: npm run receiver -- [options]
  --port <n>            port on 127.0.0.1 (default 4000; 0 = any free port)
  --secret <whsec_…>    signing secret to verify with; repeat it or separate with commas
                        to accept both secrets of a rotation grace window
  --fail-rate <0..1>    share of requests answered with a failure (default 0)
  --fail-status <n>     status of those failures (default 503)
  --help                this text`;

/** Thrown for a bad command line: printed with the usage, no stack trace. */
class UsageError extends Error {}

function parseNumber(raw: string, flag: string, ok: (n: number) => boolean, expected: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !ok(n)) throw new UsageError(`${flag} must be ${expected}, got "${raw}"`);
  return n;
}

function banner(receiver: Receiver, secrets: readonly string[], failStatus: number, interactive: boolean): string {
  const hookUrl = `${receiver.url}/hooks`;
  const lines = [
    '',
    `Demo webhook receiver listening on ${hookUrl}`,
    secrets.length > 0
      ? `  Signatures  verified with ${secrets.length === 1 ? '1 secret' : `${secrets.length} secrets (any may match)`}, ±5 min timestamp tolerance`
      : '  Signatures  NOT VERIFIED: no --secret given, every request is accepted and marked UNVERIFIED',
    `  Failures    ${Math.round(receiver.failRate * 100)}% of requests answered ${failStatus}`,
    '  Dedupe      on webhook-id, in memory (forgotten on restart)',
    '',
    '  Register it on the local stack (`npm start`; token in .local/stack.json):',
    `    curl -X POST -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \\`,
    `      -d '{"url":"${hookUrl}","eventTypes":["webhook.test_event"]}' \\`,
    '      http://127.0.0.1:3000/workspaces/demo/webhooks',
    '  Get its signing secret (shown once):  POST /workspaces/demo/webhooks/<id>/rotate-secret',
    '  Send a test delivery:                 POST /workspaces/demo/webhooks/<id>/test-event',
  ];
  if (secrets.length === 0) {
    lines.push(
      '',
      '  WARNING: signatures are NOT verified. Rotate the endpoint secret as above and restart with',
      '    npm run receiver -- --secret whsec_…',
    );
  }
  lines.push('', interactive ? 'Type f + Enter to toggle failing ALL requests; Ctrl-C stops.' : 'Ctrl-C stops.', '');
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '4000' },
      secret: { type: 'string', multiple: true },
      'fail-rate': { type: 'string', default: '0' },
      'fail-status': { type: 'string', default: '503' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const port = parseNumber(values.port, '--port', (n) => Number.isInteger(n) && n >= 0 && n <= 65535, 'a port number (0-65535)');
  const failRate = parseNumber(values['fail-rate'], '--fail-rate', (n) => n >= 0 && n <= 1, 'between 0 and 1');
  const failStatus = parseNumber(
    values['fail-status'],
    '--fail-status',
    (n) => Number.isInteger(n) && n >= 400 && n <= 599,
    'a 4xx or 5xx status',
  );
  const secrets = (values.secret ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');

  let receiver: Receiver;
  try {
    receiver = await startReceiver({ port, secret: secrets, failRate, failStatus, log: (line) => console.log(line) });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(`Port ${port} is already in use (another receiver?). Stop it, or pick another port: npm run receiver -- --port 4001`);
      return 1;
    }
    throw e;
  }
  const interactive = process.stdin.isTTY === true;
  console.log(banner(receiver, secrets, failStatus, interactive));

  let input: Interface | undefined;
  if (interactive) {
    // terminal: false keeps the TTY in cooked mode, so Ctrl-C still raises SIGINT.
    input = createInterface({ input: process.stdin, terminal: false });
    input.on('line', (text) => {
      if (text.trim().toLowerCase() !== 'f') return;
      // Toggle between failing everything and the configured rate (or none, when that was 1).
      const next = receiver.failRate === 1 ? (failRate === 1 ? 0 : failRate) : 1;
      receiver.setFailRate(next);
      console.log(
        next === 1
          ? `-- failing ALL requests with ${failStatus} (f + Enter to stop)`
          : next === 0
            ? '-- no longer failing requests'
            : `-- back to failing ${Math.round(next * 100)}% of requests`,
      );
    });
  }

  stopOnSignals(
    (signal) => {
      input?.close();
      console.log(`\n${signal}: stopping (${receiver.received.length} deliveries processed).`);
    },
    () => receiver.stop(),
  );
  return 0;
}

main()
  .then((code) => {
    if (code !== 0) process.exit(code);
  })
  .catch((e: unknown) => {
    if (e instanceof UsageError || e instanceof ReceiverConfigError || (e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${e instanceof Error ? e.message : String(e)}\n\n${HELP}`);
      process.exit(2);
    }
    console.error(`npm run receiver failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
