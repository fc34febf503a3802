/**
 * `npm start`: the whole service on this machine, no AWS account. DynamoDB
 * Local (Java 17+) keeps its data under `.local/`; Ctrl-C stops everything.
 */
import { parseArgs } from 'node:util';
import { DISPATCHER_CONSUMER, DISPATCHER_SETTING_BOUNDS, ENV } from '#lambdas/contract/deployment';
import { demoPortalLink } from './local/portal-link';
import { startLocalStack } from './local/stack';
import { endProcess, stopOnSignals } from './local/stop-on-signals';

const HELP = `Usage: npm start -- [options]
  --port <n>          API port (default 3000)
  --dynamodb-port <n> DynamoDB Local port (default: a free one)
  --data-dir <path>   data folder (default .local)
  --workspace <slug>  seeded workspace (default demo)
  --time-scale <n>    divide retry delays, visibility timeouts and schedules by n (default 1;
                      e.g. 60 shows a whole retry ladder in about 10 s)
  --dispatcher-batch-size <n>       records per dispatcher batch, 1-100 (default 25; over 10 a
                                    batch waits up to 1 s to fill, as on Lambda)
  --dispatcher-max-concurrency <n>  dispatcher batches at once, 2-1000 (default 4)
  --help              this text
Environment: CONSOLE_OIDC='{"issuer":…,"clientId":…,"roles":{…}}' turns staff sign-in on
  (the stage setting consoleOidc as JSON; an http://localhost issuer is allowed here: README "Staff sign-in")`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '3000' },
      'dynamodb-port': { type: 'string' },
      'data-dir': { type: 'string', default: '.local' },
      workspace: { type: 'string', default: 'demo' },
      'time-scale': { type: 'string', default: '1' },
      'dispatcher-batch-size': { type: 'string' },
      'dispatcher-max-concurrency': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const timeScale = Number(values['time-scale']);
  if (!Number.isFinite(timeScale) || timeScale < 1) throw new Error('--time-scale must be a number ≥ 1');
  const setting = (flag: 'dispatcher-batch-size' | 'dispatcher-max-concurrency', bounds: { min: number; max: number }) => {
    const raw = values[flag];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < bounds.min || n > bounds.max)
      throw new Error(`--${flag} must be an integer from ${bounds.min} to ${bounds.max}`);
    return n;
  };
  const dispatcherBatchSize = setting('dispatcher-batch-size', DISPATCHER_SETTING_BOUNDS.batchSize);
  const dispatcherMaxConcurrency = setting('dispatcher-max-concurrency', DISPATCHER_SETTING_BOUNDS.maxConcurrency);
  const stack = await startLocalStack({
    timeScale,
    ...(dispatcherBatchSize ? { dispatcherBatchSize } : {}),
    ...(dispatcherMaxConcurrency ? { dispatcherMaxConcurrency } : {}),
    port: Number(values.port),
    dataDir: values['data-dir'],
    workspace: values.workspace,
    ...(values['dynamodb-port'] ? { dynamoDbPort: Number(values['dynamodb-port']) } : {}),
    ...(process.env[ENV.RATE_LIMITS] ? { rateLimits: process.env[ENV.RATE_LIMITS] } : {}),
  });
  const portalLink = await demoPortalLink(stack);
  // CONSOLE_OIDC (the stage setting consoleOidc as JSON) turns staff sign-in on: README "Staff sign-in".
  const staffSignIn = stack.consoleOidcRedirectUri
    ? `\n              staff sign-in on: register the redirect URI ${stack.consoleOidcRedirectUri} for the console's client at the provider`
    : '';
  console.log(`
Webhook delivery service: local stack ready
  API         ${stack.apiUrl}
  OpenAPI     ${stack.apiUrl}/openapi.json
  Reference   ${stack.apiUrl}/reference
  Console     ${stack.apiUrl}/console   (sign in with the workspace and token below)${staffSignIn}
  MCP         ${stack.mcpUrl}   (Streamable HTTP; Authorization: Bearer <token>)
  DynamoDB    ${stack.dynamoDbEndpoint} (pid ${stack.dynamoDbPid}, data in ${values['data-dir']}/dynamodb)
  Workspace   ${stack.workspace}
  Token       ${stack.token}   (admin scope; also in ${values['data-dir']}/stack.json)
  Portal      ${portalLink}
              (the console signed in as ${stack.workspace}'s customer for a day; opens once, within 10 minutes)

  Pipeline    in-process queues (SQS semantics, DLQ after 7 receives, kept in ${values['data-dir']}/dynamodb${stack.restoredMessages ? `: ${stack.restoredMessages} messages taken up from the last run` : ''}), dispatcher (batches of ${dispatcherBatchSize ?? DISPATCHER_CONSUMER.batchSize}, ${dispatcherMaxConcurrency ?? DISPATCHER_CONSUMER.maxConcurrency} at once) and slow lane, schedules${timeScale > 1 ? `, time ×${timeScale}` : ''}
  Events      POST ${stack.apiUrl}/local/events  {"workspace","type","payload"}  (stands in for EventBridge)

  Development switch ON: webhook URLs may target loopback (localhost, 127.0.0.0/8, [::1]) over http.
  The deployed stack never allows that. Try the demo receiver: npm run receiver

  Try:  curl -H "Authorization: Bearer ${stack.token}" ${stack.apiUrl}/workspaces/${stack.workspace}/overview
Ctrl-C stops the API and DynamoDB Local (within a few seconds, deliveries in flight or not).`);

  stopOnSignals(
    (signal) => console.log(`\n${signal}: stopping… (again to stop at once)`),
    () => stack.stop(),
    // A stop cut short still takes the DynamoDB Local it started with it.
    { force: () => (stack.dynamoDbPid === null ? undefined : endProcess(stack.dynamoDbPid)) },
  );
}

main().catch((e: unknown) => {
  console.error(`npm start failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
