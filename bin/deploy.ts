#!/usr/bin/env node
/**
 * `npm run deploy -- [--region R] [--profile P] [-c key=value ...] [cdk deploy flags]`: runs the
 * pre-flight (bin/preflight.ts) and, when it passes, `cdk deploy` of the stage with the same settings,
 * profile and region; every other flag (`--require-approval never`, `--outputs-file outputs.json`) goes
 * to `cdk deploy` as it is. A failed pre-flight stops it before anything is deployed (docs/deploy.md#first-deploy).
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { contextArgs, parseCommandLine, UsageError, type CommandLine } from './preflight/args';
import { preflight, type PreflightDeps, type PreflightOutcome } from './preflight/run';

/** Runs a program to its end, its output on ours; resolves to its exit code. */
export type Spawner = (command: string, args: readonly string[], env: NodeJS.ProcessEnv) => Promise<number>;

/** What the deploy depends on from outside, replaced in tests. */
export interface DeployDeps extends PreflightDeps {
  /** Runs the pre-flight (default: bin/preflight's, with the other deps). */
  readonly preflight?: (command: CommandLine) => Promise<PreflightOutcome>;
  /** Runs `npx cdk …` (default: a child process). */
  readonly spawn?: Spawner;
  /** The environment cdk inherits (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

const spawnInherit: Spawner = (command, args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

/** Usage of `npm run deploy`. */
const HELP = `Usage: npm run deploy -- [--region <region>] [--profile <profile>] [-c <key>=<value> ...] [cdk deploy flags]

Runs the pre-flight (npm run preflight) and, when it passes, cdk deploy of the stage with the same
settings, profile and region. Other flags go to cdk deploy as they are, e.g.
  --require-approval never        deploy without asking to confirm IAM changes (CI)
  --outputs-file outputs.json     write the stack's outputs to a file`;

/**
 * The `cdk deploy` invocation for a command line: the stack, the settings, the profile and the
 * flags left over; the region goes in the environment (`AWS_REGION`, `AWS_DEFAULT_REGION`), which
 * is where cdk reads it.
 */
export function cdkDeployInvocation(
  command: CommandLine,
  stackName: string,
  env: NodeJS.ProcessEnv,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  return {
    command: 'npx',
    args: [
      'cdk',
      'deploy',
      stackName,
      ...contextArgs(command.context),
      ...(command.profile ? ['--profile', command.profile] : []),
      ...command.rest,
    ],
    env: command.region ? { ...env, AWS_REGION: command.region, AWS_DEFAULT_REGION: command.region } : env,
  };
}

/** `npm run deploy -- …`: the exit code (cdk's, or 1 when the pre-flight failed). */
export async function main(argv: readonly string[], deps: DeployDeps = {}): Promise<number> {
  const print = deps.print ?? ((line: string) => console.log(line));
  let command: CommandLine;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    print(`${error.message}\n\n${HELP}`);
    return 1;
  }
  if (command.help) {
    print(HELP);
    return 0;
  }
  const outcome = await (deps.preflight ?? ((c: CommandLine) => preflight(c, deps)))(command);
  if (!outcome.ready || !outcome.stackName) {
    print('The pre-flight failed: nothing was deployed.');
    return 1;
  }
  const invocation = cdkDeployInvocation(command, outcome.stackName, deps.env ?? process.env);
  print(`\n${invocation.command} ${invocation.args.join(' ')}`);
  return (deps.spawn ?? spawnInherit)(invocation.command, invocation.args, invocation.env);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main(process.argv.slice(2));
