/**
 * Every function runs the AWS SDK it was built with, never the Lambda runtime's copy
 * (docs/scaling.md#the-aws-sdk-in-the-bundles): each bundle holds the SDK clients its function can
 * load and leaves out only what it can never load.
 *
 * - In the service's stack, a function bundles the client of every AWS service its role may call,
 *   and a REST operation bundles exactly the clients of what its contract `uses`.
 * - A bundle built as deployed, copied where no `node_modules` resolves (NODE_PATH empty), runs the
 *   composition root's every AWS adapter: those its environment enables load their client from the
 *   bundle and send a signed request (to a stand-in endpoint) with the environment's credentials,
 *   as on Lambda; the others refuse without loading anything.
 * - Every function's bundle loads there too, and requires nothing outside Node.js but the modules
 *   it leaves out, each only through an `import()` it never reaches.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYED_NODE_OPTIONS, deployedExternalModules, serviceFunctionBuildOptions } from '../../bench/lambdas';
import { ENV } from '../../lambdas/contract/deployment';
import { OPERATIONS, type OperationDef, type OperationResource } from '../../lambdas/contract/operations';
import { LAZY_SDK_CLIENTS, type LazySdkClient } from '../../lambdas/contract/sdk-clients';
import { PROJECT_ROOT, sdkExternalModules, ServiceFunction, UNUSED_CREDENTIAL_PROVIDERS } from '../../lib/constructs/service-function';
import { buildTestApp, removeTestOutput } from './synth';
import { actionsOf, logicalId, ofType, statementsOf, variablesOf, type Statement } from './template';

const CLIENTS = Object.keys(LAZY_SDK_CLIENTS) as LazySdkClient[];
/** The client of each service prefix of an IAM action. */
const CLIENT_OF_SERVICE: Readonly<Record<string, LazySdkClient>> = {
  sqs: '@aws-sdk/client-sqs',
  events: '@aws-sdk/client-eventbridge',
  kms: '@aws-sdk/client-kms',
};
/** The client of each resource an operation may use (lambdas/contract/operations.ts); the outbox (`domainEvents`) is a DynamoDB table. */
const CLIENT_OF_RESOURCE: { readonly [R in OperationResource]?: LazySdkClient } = {
  deliveryQueue: '@aws-sdk/client-sqs',
  jobQueue: '@aws-sdk/client-sqs',
  secretSealing: '@aws-sdk/client-kms',
};
const kebab = (id: string) => id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const bundledClients = (externals: readonly string[]) => CLIENTS.filter((c) => !externals.includes(c));

const scratch = mkdtempSync(join(tmpdir(), 'webhooks-sdk-bundling-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder of `scratch` with no `node_modules` in it or above it, holding `files` copied in. */
function isolated(name: string, files: readonly string[]): string {
  const dir = join(scratch, 'run', name);
  mkdirSync(dir, { recursive: true });
  for (const file of files) copyFileSync(file, join(dir, file.split('/').pop()!));
  for (let up = dir; up !== dirname(up); up = dirname(up)) expect(existsSync(join(up, 'node_modules')), up).toBe(false);
  return dir;
}

/** Runs `node -e script` in `cwd` with exactly `env` (no NODE_PATH), as a Lambda would run the bundle. */
function runNode(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, NODE_PATH: '', NODE_OPTIONS: DEPLOYED_NODE_OPTIONS, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('in the service stack', () => {
  let functions: ServiceFunction[];
  let template: Template;
  let app: ReturnType<typeof buildTestApp> | undefined;

  beforeAll(() => {
    app = buildTestApp();
    functions = app.app.node.findAll().filter((c): c is ServiceFunction => c instanceof ServiceFunction);
    template = Template.fromStack(app.stack);
  }, 120_000);
  afterAll(() => removeTestOutput(app?.app));

  it('every function leaves out what its deployed environment (variables added after construction included) never loads', () => {
    for (const fn of functions) {
      const variables = variablesOf(template, fn) as Record<string, string>;
      expect(fn.externalModules, fn.node.path).toEqual(sdkExternalModules(variables));
    }
  });

  it('every function bundles the client of each AWS service its role may call, and leaves the credential providers out', () => {
    expect(functions.length).toBeGreaterThan(30);
    const keyStatements = ofType(template, 'AWS::KMS::Key').flatMap(
      ([, key]) => (key.Properties.KeyPolicy as { Statement: (Statement & { Principal?: unknown })[] }).Statement,
    );
    for (const fn of functions) {
      const role = logicalId(fn.role);
      // An event source mapping's on-failure destination is granted to the role but sent to by Lambda, not the code.
      const destinations = ofType(template, 'AWS::Lambda::EventSourceMapping')
        .filter(([, m]) => JSON.stringify(m.Properties.FunctionName).includes(`"${logicalId(fn.function)}"`))
        .map(([, m]) =>
          JSON.stringify(
            (m.Properties.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure?.Destination ?? null,
          ),
        )
        .filter((d) => d !== 'null');
      const byLambda = (s: Statement) => destinations.includes(JSON.stringify(s.Resource));
      const granted = [
        ...statementsOf(template, fn).filter((s) => !byLambda(s)),
        ...keyStatements.filter((s) => JSON.stringify(s.Principal ?? null).includes(`"${role}"`)),
      ].flatMap(actionsOf);
      const needed = new Set(granted.map((a) => CLIENT_OF_SERVICE[a.split(':')[0]!]).filter((c) => c !== undefined));
      for (const client of needed) expect(fn.externalModules, `${fn.node.path} may call ${client}'s service`).not.toContain(client);
      expect(fn.externalModules, fn.node.path).toEqual(expect.arrayContaining([...UNUSED_CREDENTIAL_PROVIDERS]));
      expect(
        fn.externalModules.filter((m) => m.includes('dynamodb')),
        fn.node.path,
      ).toEqual([]);
    }
  });

  it('a REST operation bundles exactly the clients of what its contract uses', () => {
    const deployed = deployedExternalModules(PROJECT_ROOT);
    const defs: readonly OperationDef[] = OPERATIONS;
    for (const def of defs) {
      const externals = deployed.get(kebab(def.operationId));
      expect(externals, def.operationId).toBeDefined();
      const expected = [...new Set((def.uses ?? []).flatMap((r) => CLIENT_OF_RESOURCE[r] ?? []))].sort();
      expect(bundledClients(externals!).sort(), def.operationId).toEqual(expected);
    }
    // The MCP function runs every operation: it bundles what any of them uses.
    const all = [...new Set(defs.flatMap((def) => (def.uses ?? []).flatMap((r) => CLIENT_OF_RESOURCE[r] ?? [])))].sort();
    expect(bundledClients(deployed.get('mcp')!).sort()).toEqual(all);
  }, 60_000);
});

/** What the stand-in AWS endpoint received: the `X-Amz-Target` and the credential of each request. */
interface Received {
  readonly target: string;
  readonly credential: string;
}

/** Answers SQS, EventBridge and KMS JSON-protocol calls as the services would, recording each. */
function standInAws(received: Received[]): Server {
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  return createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const credential = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
      received.push({ target, credential });
      const input = JSON.parse(body || '{}') as { Entries?: { Id: string; MessageBody: string }[]; MessageBody?: string };
      const answers: Record<string, () => unknown> = {
        'AmazonSQS.SendMessageBatch': () => ({
          Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })),
          Failed: [],
        }),
        'AmazonSQS.SendMessage': () => ({ MessageId: 'm-1', MD5OfMessageBody: md5(input.MessageBody ?? '') }),
        'AmazonSQS.ChangeMessageVisibility': () => ({}),
        'AWSEvents.PutEvents': () => ({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] }),
        'TrentService.GenerateDataKey': () => ({
          KeyId: 'k',
          Plaintext: Buffer.alloc(32, 7).toString('base64'),
          CiphertextBlob: Buffer.from('sealed-data-key').toString('base64'),
        }),
      };
      const answer = answers[target];
      res.writeHead(answer ? 200 : 400, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(answer ? answer() : { __type: 'UnknownOperationException', message: target }));
    });
  });
}

/**
 * An entry that calls every AWS adapter of the composition root once and reports each outcome
 * (`ok`, or the error's message); the stand-in's record tells whether it sent.
 */
const PROBE = `
import { defaultRuntime, delayerFromEnv, outboxRelayFromEnv, queueFromEnv, secretSealerFromEnv } from ${JSON.stringify(join(PROJECT_ROOT, 'lambdas/composition/runtime.ts'))};
const outcome = async (run: () => Promise<unknown>) => { try { await run(); return 'ok'; } catch (e) { return (e as Error).message; } };
const message = { deliveryId: 'whd_probe' };
export async function probe() {
  return {
    deliveryQueue: await outcome(() => queueFromEnv(process.env, 'DELIVERY_QUEUE_URL').send([message])),
    slowQueue: await outcome(() => queueFromEnv(process.env, 'SLOW_DELIVERY_QUEUE_URL').send([message])),
    deadLetters: await outcome(() => queueFromEnv(process.env, 'DEAD_LETTER_QUEUE_URL').send([message])),
    delayer: await outcome(() => delayerFromEnv(process.env, 'DELIVERY_QUEUE_URL').delay('receipt', 5)),
    jobQueue: await outcome(() => defaultRuntime().deps.jobQueue.send({ jobId: 'whj_probe' })),
    seal: await outcome(() => secretSealerFromEnv().seal('whsec_probe')),
    events: await outcome(() =>
      outboxRelayFromEnv().bus.put([{ outboxId: 'wha_probe', workspace: 'probe', type: 'probe.checked', payloadJson: '{}', createdAt: new Date(0).toISOString() }]),
    ),
  };
}
`;

describe('a bundle built as deployed, where nothing but the bundle resolves', () => {
  let server: Server;
  let endpoint: string;
  const received: Received[] = [];

  beforeAll(async () => {
    server = standInAws(received);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(join(scratch, 'probe.ts'), PROBE);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Every variable of every client, pointing at the stand-in. */
  const resourceEnv = (): Record<string, string> => ({
    [ENV.DELIVERY_QUEUE_URL]: `${endpoint}/000000000000/deliveries`,
    [ENV.SLOW_DELIVERY_QUEUE_URL]: `${endpoint}/000000000000/slow-deliveries`,
    [ENV.DEAD_LETTER_QUEUE_URL]: `${endpoint}/000000000000/dead-letters`,
    [ENV.JOB_QUEUE_URL]: `${endpoint}/000000000000/jobs`,
    [ENV.EVENT_BUS_NAME]: 'probe-bus',
    [ENV.SECRETS_KEY_ID]: 'arn:aws:kms:eu-west-1:000000000000:key/probe',
  });

  /** Builds the probe with the externals of a function given `environment`, and runs it isolated with that environment. */
  async function probeWith(name: string, environment: Record<string, string>) {
    const out = join(scratch, 'build', name);
    const result = await build({
      ...serviceFunctionBuildOptions(join(scratch, 'probe.ts'), join(out, 'index.js'), PROJECT_ROOT, sdkExternalModules(environment)),
      metafile: true,
      logLevel: 'error',
    });
    const dir = isolated(name, [join(out, 'index.js'), join(out, 'index.js.map')]);
    received.length = 0;
    const run = await runNode(
      "let r;try{require.resolve('@aws-sdk/client-sqs');r='resolvable'}catch{r='unresolvable'}" +
        "require('./index.js').probe().then(o=>process.stdout.write(JSON.stringify({sdk:r,...o})))",
      dir,
      {
        AWS_REGION: 'eu-west-1',
        // What Lambda sets from the execution role.
        AWS_ACCESS_KEY_ID: 'AKIDPROBE',
        AWS_SECRET_ACCESS_KEY: 'probe-secret',
        AWS_SESSION_TOKEN: 'probe-session',
        AWS_ENDPOINT_URL: endpoint,
        [ENV.TABLE_NAME]: 'probe-table',
        [ENV.POWERTOOLS_LOG_LEVEL]: 'ERROR',
        ...environment,
      },
    );
    expect(run.stderr).not.toMatch(/Cannot find module/);
    expect(run.code, run.stderr).toBe(0);
    return { outcome: JSON.parse(run.stdout) as Record<string, string>, metafile: result.metafile, received: [...received] };
  }

  it('with every resource: each client loads from the bundle and signs with the environment credentials', async () => {
    const { outcome, received: calls } = await probeWith('all', resourceEnv());
    expect(outcome).toEqual({
      sdk: 'unresolvable',
      deliveryQueue: 'ok',
      slowQueue: 'ok',
      deadLetters: 'ok',
      delayer: 'ok',
      jobQueue: 'ok',
      seal: 'ok',
      events: 'ok',
    });
    expect(calls.map((c) => c.target).sort()).toEqual(
      [
        'AWSEvents.PutEvents',
        'AmazonSQS.ChangeMessageVisibility',
        'AmazonSQS.SendMessage',
        'AmazonSQS.SendMessageBatch',
        'AmazonSQS.SendMessageBatch',
        'AmazonSQS.SendMessageBatch',
        'TrentService.GenerateDataKey',
      ].sort(),
    );
    for (const call of calls) expect(call.credential, call.target).toBe('AKIDPROBE');
  }, 60_000);

  it.each([
    ['none', []],
    ['sqs', [ENV.DELIVERY_QUEUE_URL, ENV.JOB_QUEUE_URL]],
    ['eventbridge', [ENV.EVENT_BUS_NAME]],
    ['kms', [ENV.SECRETS_KEY_ID]],
  ] as const)(
    'with %s: the other clients are left out and never loaded',
    async (name, variables) => {
      const all = resourceEnv();
      const environment = Object.fromEntries(variables.map((v) => [v, all[v]!]));
      const { outcome, received: calls } = await probeWith(name, environment);
      const sent = new Set(calls.map((c) => c.target.split('.')[0]));
      for (const client of CLIENTS) {
        const enabled = LAZY_SDK_CLIENTS[client].some((v) => v in environment);
        const service = {
          '@aws-sdk/client-sqs': 'AmazonSQS',
          '@aws-sdk/client-eventbridge': 'AWSEvents',
          '@aws-sdk/client-kms': 'TrentService',
        }[client];
        expect(sent.has(service), `${client} sent`).toBe(enabled);
      }
      // What is not enabled answers with the composition root's own refusal, never a missing module.
      if (!(ENV.SECRETS_KEY_ID in environment)) expect(outcome.seal).toMatch(/needs SECRETS_KEY_ID/);
      if (!(ENV.DEAD_LETTER_QUEUE_URL in environment)) expect(outcome.deadLetters).toBe('DEAD_LETTER_QUEUE_URL is not set');
      if (ENV.JOB_QUEUE_URL in environment) expect(outcome.jobQueue).toBe('ok');
      expect(outcome.events).toBe(ENV.EVENT_BUS_NAME in environment ? 'ok' : 'EVENT_BUS_NAME is not set');
      for (const value of Object.values(outcome)) expect(value).not.toMatch(/Cannot find module/);
    },
    60_000,
  );

  it('every function of the stack loads, requiring nothing but Node.js and, lazily, what it leaves out', async () => {
    const deployed = deployedExternalModules(PROJECT_ROOT);
    const entries = readdirSync(join(PROJECT_ROOT, 'lambdas', 'functions'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3));
    const builtins = new Set(builtinModules);
    // One build per set of modules left out (esbuild shares the parsing between its entries).
    const groups = new Map<string, { externals: readonly string[]; names: string[] }>();
    for (const name of entries) {
      const externals = deployed.get(name) ?? sdkExternalModules({});
      const group = groups.get(externals.join()) ?? { externals, names: [] };
      group.names.push(name);
      groups.set(externals.join(), group);
    }
    const files: string[] = [];
    for (const [i, { externals, names }] of [...groups.values()].entries()) {
      const out = join(scratch, 'functions', String(i));
      const {
        outfile: _outfile,
        entryPoints: _entries,
        ...options
      } = serviceFunctionBuildOptions(join(PROJECT_ROOT, 'x.ts'), join(out, 'x.js'), PROJECT_ROOT, externals);
      const { metafile } = await build({
        ...options,
        entryPoints: Object.fromEntries(names.map((n) => [n, join(PROJECT_ROOT, 'lambdas', 'functions', `${n}.ts`)])),
        outdir: out,
        metafile: true,
        logLevel: 'error',
      });
      for (const name of names) {
        const output = Object.entries(metafile.outputs).find(([path]) => path.endsWith(`/${name}.js`))![1];
        for (const imported of output.imports.filter((imp) => imp.external)) {
          if (imported.path.startsWith('node:') || builtins.has(imported.path)) continue;
          expect(imported.kind, `${name} requires ${imported.path} at load`).toBe('dynamic-import');
          expect(
            externals.some((e) => e === imported.path || (e.endsWith('/*') && imported.path.startsWith(e.slice(0, -1)))),
            `${name} leaves out ${imported.path}`,
          ).toBe(true);
        }
        const dir = isolated(`fn-${name}`, [join(out, `${name}.js`), join(out, `${name}.js.map`)]);
        files.push(join(dir, `${name}.js`));
      }
    }
    expect(files).toHaveLength(entries.length);
    // One process loads them all (each resolves from its own folder), to keep the test short.
    const run = await runNode(
      `for (const f of ${JSON.stringify(files)}) { try { require(f); } catch (e) { console.error(f, e.message); process.exitCode = 1; } }`,
      scratch,
      { AWS_REGION: 'eu-west-1', [ENV.TABLE_NAME]: 'probe-table' },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  }, 300_000);
});
