/**
 * The one Lambda function construct of the service: every function of the stack
 * (REST operations, authorizer, docs, MCP, the delivery pipeline and the schedules) is a
 * ServiceFunction, so runtime, architecture, tracing, logging, bundling and the
 * Powertools environment are decided here once.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type ILogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV, LOCAL_ONLY_ENV, SERVICE_NAME } from '#lambdas/contract/deployment';
import { METRICS_NAMESPACE } from '#lambdas/contract/metrics';
import { LAZY_SDK_CLIENTS, sdkClientsLoadableWith, type LazySdkClient } from '#lambdas/contract/sdk-clients';
import { DEFAULT_CONFIG, removalPolicyOf, retentionOf } from '../config';
import { assertGeneratedCodeFresh } from '../generate/contract-code';

/** Root of the repository (where package-lock.json is). */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The Lambda runtime of every function. The newest Node.js runtime CDK knows:
 * cdk-nag AwsSolutions-L1 asks for the latest version of the family. The tests run
 * on the same major: the `node` devDependency pins it, and a test keeps the two equal.
 */
export const SERVICE_RUNTIME = Runtime.NODEJS_24_X;

/**
 * The modules the SDK's default credential chain imports only when the environment holds no
 * credentials (after `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, read first, are missing, or when
 * `AWS_PROFILE` is set). Lambda gives every function its role's credentials in those variables, and
 * {@link ServiceFunction} refuses `AWS_PROFILE`, so a deployed function never loads them: they stay
 * out of every bundle (docs/scaling.md#the-aws-sdk-in-the-bundles).
 */
export const UNUSED_CREDENTIAL_PROVIDERS = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@aws-sdk/credential-provider-login',
  '@aws-sdk/token-providers',
  '@aws-sdk/nested-clients',
  '@aws-sdk/nested-clients/*',
  '@smithy/credential-provider-imds',
] as const;

/**
 * What a function's bundle leaves out: the lazily loaded SDK clients its environment never lets it
 * load, and the credential providers no deployed function loads. Everything else, the SDK included,
 * is bundled: a function runs the SDK the tests ran with, and nothing it could load is left for the
 * runtime's copy (docs/scaling.md#the-aws-sdk-in-the-bundles).
 */
export function sdkExternalModules(environment: Readonly<Record<string, string | undefined>>): string[] {
  const loadable = new Set(sdkClientsLoadableWith(environment));
  const unused = (Object.keys(LAZY_SDK_CLIENTS) as LazySdkClient[]).filter((client) => !loadable.has(client));
  return [...unused, ...UNUSED_CREDENTIAL_PROVIDERS];
}

/** Makes the SDK's credential chain skip the environment's credentials for a profile, which no deployed function has. */
const AWS_PROFILE = 'AWS_PROFILE';

let generatedChecked = false;

/**
 * Fails synth when lambdas/generated/ is older than the contract or config/event-types.json
 * (docs/architecture.md#one-contract): functions validate with that code, so a deploy must never
 * ship it stale. Checked once per process.
 */
function checkGeneratedCode(): void {
  if (generatedChecked) return;
  assertGeneratedCodeFresh();
  generatedChecked = true;
}

/** Absolute path of a Lambda entry file, `lambdas/functions/<name>.ts`; fails synth when it is missing. */
export function functionEntry(name: string): string {
  const entry = join(PROJECT_ROOT, 'lambdas', 'functions', `${name}.ts`);
  if (!existsSync(entry))
    throw new Error(`Lambda entry ${entry} does not exist (every function needs lambdas/functions/${name}.ts exporting \`handler\`)`);
  return entry;
}

/** The log settings of every construct that owns functions or log groups; defaults are the stage configuration's. */
export interface LogProps {
  /** Retention of the log groups. @default retentionOf(DEFAULT_CONFIG): 30 days */
  readonly logRetention?: RetentionDays;
  /** Removal policy of the log groups. @default removalPolicyOf(DEFAULT_CONFIG): RemovalPolicy.RETAIN */
  readonly logRemovalPolicy?: RemovalPolicy;
}

/** {@link LogProps} with the defaults filled in. */
export function logSettings(props: LogProps): Required<LogProps> {
  return {
    logRetention: props.logRetention ?? retentionOf(DEFAULT_CONFIG),
    logRemovalPolicy: props.logRemovalPolicy ?? removalPolicyOf(DEFAULT_CONFIG),
  };
}

/** Properties of a {@link ServiceFunction}. */
export interface ServiceFunctionProps extends LogProps {
  /** Absolute path of the entry file; it exports `handler`. See {@link functionEntry}. */
  readonly entry: string;
  /**
   * A log group shared with other functions, which then get no group of their own (each log group
   * is a stack resource, and a stack holds at most 500: docs/deploy.md#bootstrap). Lambda names
   * each stream of a shared group `YYYY/MM/DD/<function name>[<version>]<environment id>`, so
   * every line still says which function wrote it (docs/operations.md#logs-insights). The role
   * may write to every stream of the group: a stream-level grant would need the function's name,
   * which CloudFormation generates after the role's policy. The group's own retention and removal
   * policy apply; give `logRetention` and `logRemovalPolicy` to the group, not here.
   * @default - a log group of its own, with `logRetention` and `logRemovalPolicy`
   */
  readonly logGroup?: ILogGroup;
  /** Shown in the Lambda console. @default - none */
  readonly description?: string;
  /** Variables added to the common Powertools/Node.js ones. @default {} */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /**
   * Shell commands run after esbuild, given the bundle's output directory (e.g. to
   * copy files next to `index.js`). Local bundling only: they run on this machine.
   * @default - none
   */
  readonly afterBundling?: (outputDir: string) => string[];
}

/**
 * A Node.js Lambda function with the service's defaults: ARM64, the newest
 * Node.js runtime, X-Ray tracing, its own log group with a retention (or the
 * shared one it is given), 256 MB, a minified CommonJS bundle with source maps,
 * and the Powertools environment. Its role starts with nothing but writing to
 * that log group; grant the rest.
 */
export class ServiceFunction extends Construct {
  /** The entry file, `lambdas/functions/<name>.ts`. */
  readonly entry: string;
  /** The modules its bundle leaves out ({@link sdkExternalModules}). */
  readonly externalModules: readonly string[];
  /** The function. */
  readonly function: NodejsFunction;
  /** The function's execution role (only log writing and X-Ray until granted more). */
  readonly role: iam.Role;
  /** The function's log group: its own, or the shared one of {@link ServiceFunctionProps.logGroup}. */
  readonly logGroup: ILogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    checkGeneratedCode();
    const environment = props.environment ?? {};
    for (const name of LOCAL_ONLY_ENV) {
      if (name in environment)
        throw new Error(`${this.node.path}: ${name} is a local-development switch and must never be set on a deployed function`);
    }
    if (AWS_PROFILE in environment)
      throw new Error(
        `${this.node.path}: ${AWS_PROFILE} would make the SDK look for credentials its bundle leaves out; a function uses its role's credentials`,
      );
    this.entry = props.entry;

    if (props.logGroup && (props.logRetention !== undefined || props.logRemovalPolicy !== undefined))
      throw new Error(
        `${this.node.path}: logRetention and logRemovalPolicy belong to the shared log group it is given, not to the function`,
      );
    const logs = logSettings(props);
    this.logGroup = props.logGroup ?? new LogGroup(this, 'Logs', { retention: logs.logRetention, removalPolicy: logs.logRemovalPolicy });

    // Our own role instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole (logs:* on every log group of the account);
    // this one may only write to the function's log group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${this.node.path}`,
    });
    this.logGroup.grantWrite(this.role);

    const fullEnvironment = {
      [ENV.POWERTOOLS_SERVICE_NAME]: SERVICE_NAME,
      [ENV.POWERTOOLS_METRICS_NAMESPACE]: METRICS_NAMESPACE,
      [ENV.POWERTOOLS_LOG_LEVEL]: 'INFO',
      // Stack traces point at the TypeScript sources (the bundle ships a source map).
      NODE_OPTIONS: '--enable-source-maps',
      ...environment,
    };
    this.externalModules = sdkExternalModules(fullEnvironment);

    this.function = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: SERVICE_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      role: this.role,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      environment: fullEnvironment,
      bundling: {
        // CommonJS: no ESM interop shims needed; nothing bundled into a Lambda uses import.meta.
        format: OutputFormat.CJS,
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // Prefer packages' ESM builds so esbuild can tree-shake them.
        mainFields: ['module', 'main'],
        // The AWS SDK v3 is bundled (not the runtime's copy), but for what this function can never load.
        externalModules: [...this.externalModules],
        logLevel: LogLevel.WARNING,
        ...(props.afterBundling
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (_inputDir: string, outputDir: string) => props.afterBundling?.(outputDir) ?? [],
              },
            }
          : {}),
      },
    });

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active X-Ray tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions; every other statement of this role names its resources (a test asserts that only X-Ray actions have Resource "*").',
    });
  }
}
