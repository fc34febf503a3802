/**
 * Runs the pre-flight: synthesizes the stage's template with the command line's settings, finds
 * the account and region the credentials point at, runs every check, and prints one line per
 * check (with what is wrong and the commands that fix it). Shared by `npm run preflight` and
 * `npm run deploy`.
 */
import { GetCallerIdentityCommand } from '@aws-sdk/client-sts';
import { ConfigError } from '../../lib/config';
import { synthesizeStage, type SynthesizedStage } from '../../lib/synth-template';
import { checkApiGatewayRole } from './api-gateway-role';
import { parseCommandLine, UsageError, type CommandLine } from './args';
import { checkBootstrap } from './bootstrap';
import type { CheckResult, Target } from './check';
import { createClients, type ClientOptions, type PreflightClients } from './clients';
import { checkConcurrency } from './concurrency';
import { checkNames } from './names';
import { checkServiceQuotas } from './quotas';
import { checkStackState } from './stack-state';

/** What the pre-flight depends on from outside, replaced in tests. */
export interface PreflightDeps {
  /** Makes the AWS clients (default: the SDK's, with the default credential chain). */
  readonly createClients?: (options: ClientOptions) => PreflightClients;
  /** Synthesizes the stage (default: in-process, as `cdk synth`). */
  readonly synthesize?: (context: Readonly<Record<string, string>>) => SynthesizedStage;
  /** Prints one line (default: stdout). */
  readonly print?: (line: string) => void;
}

/** The outcome of a pre-flight. */
export interface PreflightOutcome {
  /** True when no check failed (warnings allowed). */
  readonly ready: boolean;
  /** The stage's stack name, when the stage could be synthesized. */
  readonly stackName?: string;
  readonly results: readonly CheckResult[];
}

/** The AWS SDK's message for a missing region (the client's config has none). */
const isMissingRegion = (error: unknown) => error instanceof Error && /region is missing/i.test(error.message);

/** The account, region and partition the clients act in, or the check result that says why there is none. */
async function resolveTarget(clients: PreflightClients, stackName: string, profile: string | undefined): Promise<Target | CheckResult> {
  const profileFlag = profile ? `--profile ${profile} ` : '';
  let region: string;
  try {
    region = await clients.sts.config.region();
  } catch (error) {
    if (!isMissingRegion(error)) throw error;
    return {
      name: 'AWS region',
      status: 'fail',
      summary: 'no region: neither --region, AWS_REGION nor the profile names one',
      fix: [`npm run preflight -- --region <region> ${profileFlag}-c stage=<stage>`],
    };
  }
  try {
    const { Account, Arn } = await clients.sts.send(new GetCallerIdentityCommand({}));
    return { account: Account ?? '', region, partition: Arn?.split(':')[1] ?? 'aws', stackName, profileFlag };
  } catch (error) {
    return {
      name: 'AWS credentials',
      status: 'fail',
      summary: `no usable AWS credentials${profile ? ` for the profile ${profile}` : ''}: ${(error as Error).message}`,
      details: ['Sign in (SSO), or give the credentials of the target account in the environment or a profile (--profile).'],
      fix: [profile ? `aws sso login --profile ${profile}` : 'aws configure sso'],
    };
  }
}

/** Runs one check; an error it did not expect (no rights, throttling) is that check's failure. */
async function guarded(name: string, check: () => Promise<CheckResult>): Promise<CheckResult> {
  try {
    return await check();
  } catch (error) {
    return {
      name,
      status: 'fail',
      summary: `could not check: ${(error as Error).name}: ${(error as Error).message}`,
      details: [
        'The pre-flight needs read access to CloudFormation, SSM, API Gateway, Lambda, EventBridge, CloudWatch and Service Quotas.',
      ],
    };
  }
}

/** Runs every check of a synthesized stage against the account the clients reach. */
export async function runChecks(
  clients: PreflightClients,
  stage: SynthesizedStage,
  profile?: string,
): Promise<{ target?: Target; results: CheckResult[] }> {
  const target = await resolveTarget(clients, stage.stackName, profile);
  if ('status' in target) return { results: [target] };
  const { template } = stage;
  const checks: [string, () => Promise<CheckResult>][] = [
    ['Stack state', () => checkStackState(clients, target)],
    [
      'CDK bootstrap',
      () => checkBootstrap(clients, target, { version: stage.requiredBootstrapVersion, parameter: stage.bootstrapVersionParameter }),
    ],
    ['API Gateway CloudWatch role', () => checkApiGatewayRole(clients, target, template)],
    ['Lambda concurrency', () => checkConcurrency(clients, target, template)],
    ['Fixed names', () => checkNames(clients, target, template)],
    ['Service quotas', () => checkServiceQuotas(clients, target, template)],
  ];
  const results: CheckResult[] = [];
  for (const [name, check] of checks) results.push(await guarded(name, check));
  return { target, results };
}

const TAG = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

/** The printed report: a header, one line per check with its details and fix commands, a verdict. */
function formatReport(stage: SynthesizedStage, target: Target | undefined, results: readonly CheckResult[]): string[] {
  const lines = [
    target
      ? `Pre-flight of ${stage.stackName} (stage ${stage.stage}) in account ${target.account}, region ${target.region}`
      : `Pre-flight of ${stage.stackName} (stage ${stage.stage})`,
  ];
  for (const result of results) {
    lines.push(`${TAG[result.status]}  ${result.name}: ${result.summary}`);
    for (const detail of result.details ?? []) lines.push(`      ${detail}`);
    if (result.fix?.length) lines.push('      Fix:', ...result.fix.map((command) => `        ${command}`));
  }
  const failed = results.filter((r) => r.status === 'fail').length;
  const warned = results.filter((r) => r.status === 'warn').length;
  const warnings = warned
    ? ` (${warned} warning${warned === 1 ? '' : 's'}: the deploy succeeds, but read ${warned === 1 ? 'it' : 'them'})`
    : '';
  lines.push(
    failed
      ? `Not ready: ${failed} check${failed === 1 ? '' : 's'} failed${warnings}. Fix ${failed === 1 ? 'it' : 'them'}, then run the pre-flight again.`
      : `Ready to deploy${warnings}.`,
  );
  return lines;
}

/** Runs the pre-flight for a parsed command line and prints its report. */
export async function preflight(command: CommandLine, deps: PreflightDeps = {}): Promise<PreflightOutcome> {
  const print = deps.print ?? ((line: string) => console.log(line));
  let stage: SynthesizedStage;
  try {
    stage = (deps.synthesize ?? synthesizeStage)(command.context);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    print(error.message);
    return { ready: false, results: [] };
  }
  const clients = (deps.createClients ?? createClients)({
    ...(command.region ? { region: command.region } : {}),
    ...(command.profile ? { profile: command.profile } : {}),
  });
  const { target, results } = await runChecks(clients, stage, command.profile);
  for (const line of formatReport(stage, target, results)) print(line);
  return { ready: results.every((r) => r.status !== 'fail'), stackName: stage.stackName, results };
}

/** Usage of `npm run preflight`. */
const PREFLIGHT_HELP = `Usage: npm run preflight -- [--region <region>] [--profile <profile>] [-c <key>=<value> ...]

Checks, with read-only AWS calls, what a deploy of the stage needs and CloudFormation cannot tell in
advance: the stack's state, the CDK bootstrap, the account's API Gateway CloudWatch role, the Lambda
concurrency the stage reserves, that the names the stack fixes are free, and the service quotas its
settings rely on. Each failed check prints the command that fixes it. Exit 0: ready; 1: not ready.

  --region <region>     the target region (default: AWS_REGION, then the profile's)
  --profile <profile>   the AWS profile (default: AWS_PROFILE, then the default chain)
  -c <key>=<value>      a stage setting, as for cdk (docs/deploy.md#settings), e.g. -c stage=prod`;

/** `npm run preflight -- …`: the exit code (0 ready, 1 not ready or a usage mistake). */
export async function main(argv: readonly string[], deps: PreflightDeps = {}): Promise<number> {
  const print = deps.print ?? ((line: string) => console.log(line));
  let command: CommandLine;
  try {
    command = parseCommandLine(argv);
    if (command.rest.length > 0)
      throw new UsageError(`unknown argument ${command.rest[0]} (npm run deploy passes cdk deploy's own flags on)`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    print(`${error.message}\n\n${PREFLIGHT_HELP}`);
    return 1;
  }
  if (command.help) {
    print(PREFLIGHT_HELP);
    return 0;
  }
  return (await preflight(command, deps)).ready ? 0 : 1;
}
