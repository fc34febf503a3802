/**
 * The REST API (docs/architecture.md#components, docs/architecture.md#authorizer): API Gateway with the TOKEN authorizer, one
 * resource and method per contract operation, each backed by its own function
 * with least-privilege table grants (plus the queue or the bus when the
 * contract says the operation `uses` them), access logging, tracing, stage throttling
 * and problem+json gateway responses. Everything per operation is generated
 * from OPERATIONS; nothing here names an operation.
 */
import { type CfnElement, Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  RestApi,
  TokenAuthorizer,
  type Method,
} from 'aws-cdk-lib/aws-apigateway';
import { AnyPrincipal, Effect, ManagedPolicy, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '#lambdas/contract/deployment';
import { kebab, OPERATIONS, routeKind, type OperationDef } from '#lambdas/contract/operations';
import type { Quota, RateLimitBucket } from '#lambdas/contract/rate-limits';
import type { WorkspaceLimits } from '#lambdas/contract/limits';
import { ConsoleEndpoint } from './console-endpoint';
import { DocsEndpoint } from './docs-endpoint';
import { operationsTableAccess } from './function-access';
import {
  bindOperationResources,
  grantOperationTableAccess,
  operationEnvironment,
  type OperationResources,
  type PortalLinks,
} from './operation-resources';
import { addProblemGatewayResponses } from './problem-responses';
import { DEFAULT_CONFIG } from '../config';
import { functionEntry, logSettings, ServiceFunction, type LogProps } from './service-function';
import type { ServiceTable } from './table';

/**
 * What the TOKEN authorizer accepts before invoking its function (anything else
 * is a 401 that costs no invocation). The same shape as `bearerToken` in
 * lambdas/domain/api-tokens.ts: `Bearer`, any case, then one token.
 */
export const BEARER_HEADER_PATTERN = '^\\s*[Bb][Ee][Aa][Rr][Ee][Rr]\\s+\\S+\\s*$';

/** Properties of a {@link ServiceApi}. */
export interface ServiceApiProps extends Omit<OperationResources, 'portalLinks'>, LogProps {
  /** The service table. */
  readonly table: ServiceTable;
  /** API Gateway stage name. @default DEFAULT_CONFIG.stage ('dev') */
  readonly stageName?: string;
  /** Per-token quotas, handed to the REST functions as `RATE_LIMITS`. @default DEFAULT_QUOTAS */
  readonly quotas?: Readonly<Record<RateLimitBucket, Quota>>;
  /** Per-workspace limits (the stage's `workspaceLimits`), handed to the REST functions as `WORKSPACE_LIMITS`. @default DEFAULT_WORKSPACE_LIMITS */
  readonly workspaceLimits?: WorkspaceLimits;
  /** How long a token's authorizer decision is cached. @default DEFAULT_CONFIG.authorizerCacheTtlSeconds (60 s) */
  readonly authorizerCacheTtl?: Duration;
  /** Stage steady-state rate, requests per second. @default DEFAULT_CONFIG.throttlingRateLimit (100) */
  readonly throttlingRateLimit?: number;
  /** Stage burst, requests. @default DEFAULT_CONFIG.throttlingBurstLimit (200) */
  readonly throttlingBurstLimit?: number;
  /**
   * Create the account's API Gateway CloudWatch role (and set it in the region's API Gateway
   * account settings), retained when the stack is deleted: the stage setting `apiGatewayAccountRole`.
   * @default DEFAULT_CONFIG.apiGatewayAccountRole (false: the account must already have one)
   */
  readonly apiGatewayAccountRole?: boolean;
  /**
   * The IAM principals allowed on the platform API (`/platform/*`), the stage setting
   * `platformPrincipals`: the resource policy explicitly denies every other principal there.
   * @default DEFAULT_CONFIG.platformPrincipals (none: every platform call refused)
   */
  readonly platformPrincipals?: readonly string[];
  /**
   * Origins whose pages may frame the console (the stage setting `consoleFrameAncestors`): the
   * console's `frame-ancestors`, and the origins a portal session's `returnUrl` may have.
   * @default DEFAULT_CONFIG.consoleFrameAncestors (none)
   */
  readonly consoleFrameAncestors?: readonly string[];
}

/** The resource-policy path of the platform API's routes: any stage, any method, under `/platform/`. */
export const PLATFORM_RESOURCE = 'execute-api:/*/*/platform/*';

/** The REST API, its authorizer, the operation functions, the docs routes and the console. */
export class ServiceApi extends Construct {
  /** The API Gateway REST API. */
  readonly api: RestApi;
  /** The function of each operation, by operationId. */
  readonly operationFunctions: ReadonlyMap<string, ServiceFunction>;
  /** The method of each operation, by operationId. */
  readonly operationMethods: ReadonlyMap<string, Method>;
  /** The TOKEN authorizer of every operation. */
  readonly authorizer: TokenAuthorizer;
  /** The TOKEN authorizer's function. */
  readonly authorizerFunction: ServiceFunction;
  /** The `/openapi.json` and `/reference` routes. */
  readonly docs: DocsEndpoint;
  /** The web console's `/console` routes. */
  readonly console: ConsoleEndpoint;
  /** The stage's access log group. */
  readonly accessLogs: LogGroup;
  /**
   * The one log group of the operations' functions, the docs function and the console function
   * (docs/operations.md#logs-insights): a stream per execution environment, named after its function.
   */
  readonly functionLogs: LogGroup;
  /** Allows `execute-api:Invoke` on exactly the platform API's routes: attach it to the platform backend's role. */
  readonly platformInvokePolicy: ManagedPolicy;
  /** Where portal links point (this API's console) and who may frame it: for the MCP function too. */
  readonly portalLinks: PortalLinks;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    const stageName = props.stageName ?? DEFAULT_CONFIG.stage;
    const platformPrincipals = [...(props.platformPrincipals ?? DEFAULT_CONFIG.platformPrincipals)];
    const ownsAccountRole = props.apiGatewayAccountRole ?? DEFAULT_CONFIG.apiGatewayAccountRole;
    const { logRetention, logRemovalPolicy } = logSettings(props);
    const table = props.table.table;

    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: logRetention, removalPolicy: logRemovalPolicy });
    // One group for the route functions rather than one each: a group per function would cost a stack
    // resource per operation (docs/deploy.md#bootstrap). The authorizer keeps its own, as do MCP and the
    // pipeline: their runbook sections (docs/operations.md) and metric filters (./monitoring.ts) read those.
    this.functionLogs = new LogGroup(this, 'FunctionLogs', { retention: logRetention, removalPolicy: logRemovalPolicy });

    this.api = new RestApi(this, 'RestApi', {
      restApiName: `webhooks-${stageName}`,
      description: 'Workspace-scoped REST API of the outbound webhook delivery service',
      endpointTypes: [EndpointType.REGIONAL],
      // Access logging needs the region's API Gateway account setting `cloudWatchRoleArn`. That role is
      // shared by every API of the account in the region, so the stack creates it only when the stage
      // asks, and keeps it when the stack is deleted (docs/deploy.md#settings).
      cloudWatchRole: ownsAccountRole,
      ...(ownsAccountRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      // The reference UI's script is about 1.5 MB; JSON pages shrink too.
      minCompressionSize: Size.kibibytes(1),
      policy: platformResourcePolicy(platformPrincipals),
      deployOptions: {
        stageName,
        tracingEnabled: true,
        throttlingRateLimit: props.throttlingRateLimit ?? DEFAULT_CONFIG.throttlingRateLimit,
        throttlingBurstLimit: props.throttlingBurstLimit ?? DEFAULT_CONFIG.throttlingBurstLimit,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });
    addProblemGatewayResponses(this.api);
    const frameAncestors = [...(props.consoleFrameAncestors ?? DEFAULT_CONFIG.consoleFrameAncestors)];
    // From the API's id and the stage's name, not `api.url`: that names the stage, which depends on
    // the deployment, which depends on the methods and so on the functions given this address.
    this.portalLinks = {
      consoleUrl: `https://${this.api.restApiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}/${stageName}/console/`,
      frameAncestors,
    };
    // API Gateway applies a changed resource policy only with a new deployment: the principals are part of its identity.
    this.api.latestDeployment?.addToLogicalId({ platformPrincipals });
    if (ownsAccountRole) {
      Validations.of(this.api.node.findChild('CloudWatchRole')).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The API Gateway account CloudWatch role (stage setting apiGatewayAccountRole) uses AmazonAPIGatewayPushToCloudWatchLogs, the AWS managed policy API Gateway documents for the account setting cloudWatchRoleArn; it allows only creating and writing log groups and streams.',
      });
    }

    this.authorizerFunction = new ServiceFunction(this, 'Authorizer', {
      entry: functionEntry('authorizer'),
      description: 'TOKEN authorizer: resolves a workspace API token by its hash',
      environment: { [ENV.TABLE_NAME]: table.tableName },
      logRetention,
      logRemovalPolicy,
    });
    props.table.grantTokenLookup(this.authorizerFunction.role);
    this.authorizer = new TokenAuthorizer(this, 'TokenAuthorizer', {
      handler: this.authorizerFunction.function,
      identitySource: IdentitySource.header('Authorization'),
      validationRegex: BEARER_HEADER_PATTERN,
      // The policy allows the whole stage, so one cached decision serves every route (lambdas/http/authorizer.ts).
      resultsCacheTtl: props.authorizerCacheTtl ?? Duration.seconds(DEFAULT_CONFIG.authorizerCacheTtlSeconds),
    });

    const restEnvironment = operationEnvironment(props.table, props.quotas, props.workspaceLimits);
    const operations = new Construct(this, 'Operations');
    const functions = new Map<string, ServiceFunction>();
    const methods = new Map<string, Method>();
    for (const def of OPERATIONS as readonly OperationDef[]) {
      // Beyond the table, exactly what the contract says the operation uses.
      const resources = bindOperationResources(def.uses ?? [], { ...props, portalLinks: this.portalLinks }, def.operationId, 'ServiceApi');
      const fn = new ServiceFunction(operations, pascal(def.operationId), {
        entry: functionEntry(kebab(def.operationId)),
        description: `${def.method} ${def.path}: ${def.summary}`.slice(0, 256),
        environment: { ...restEnvironment, ...resources.environment },
        logGroup: this.functionLogs,
      });
      resources.grant(fn.role);
      // Least privilege: the item actions and indexes the operation's code uses
      // (lib/constructs/function-access.ts); a read bumps only its own bucket's counters.
      grantOperationTableAccess(props.table, fn.role, [def], def.rateLimit);
      // A token route's request other than GET re-checks its caller by the token's hash (docs/architecture.md#authorizer):
      // an operation that reads no item of its own gets that lookup alone. Other kinds carry no token.
      const readsItems = operationsTableAccess([def]).actions.includes('dynamodb:GetItem');
      if (routeKind(def) === 'token' && def.method !== 'GET' && !readsItems) props.table.grantTokenLookup(fn.role);
      // A staff session may call any workspace's route: its workspace is read first (one consistent
      // read, docs/behaviour.md#staff-sign-in); an operation that reads no item of its own gets that lookup alone.
      if (routeKind(def) === 'token' && !def.workspaceless && !readsItems) props.table.grantWorkspaceLookup(fn.role);
      functions.set(def.operationId, fn);
      methods.set(def.operationId, this.addOperationMethod(def, fn));
    }
    this.operationFunctions = functions;
    this.operationMethods = methods;

    // Exactly the platform routes, each method on its own path (a `{param}` is any one segment's value).
    const platformRoutes = (OPERATIONS as readonly OperationDef[])
      .filter((d) => routeKind(d) === 'iam')
      .map((d) => ({ method: d.method, path: d.path.replace(/\{\w+\}/g, '*') }));
    this.platformInvokePolicy = new ManagedPolicy(this, 'PlatformInvokePolicy', {
      description: `Calls the platform API of webhooks-${stageName} (attach to the platform backend's role; the stage setting platformPrincipals must name it)`,
      statements: [
        new PolicyStatement({
          actions: ['execute-api:Invoke'],
          resources: platformRoutes.map((r) => this.api.arnForExecuteApi(r.method, r.path, stageName)),
        }),
      ],
    });
    const apiLogicalId = Stack.of(this).resolve(Stack.of(this).getLogicalId(this.api.node.defaultChild as CfnElement)) as string;
    const wildcardRoutes = [...new Set(platformRoutes.filter((r) => r.path.includes('*')).map((r) => `${r.method}${r.path}`))];
    Validations.of(this.platformInvokePolicy).acknowledge(
      ...wildcardRoutes.map((route) => ({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiLogicalId}>/${stageName}/${route}]`,
        reason:
          "One platform API route of this stage's API; the `*` stands for its path parameter (a workspace slug or a job id), since the platform backend manages every workspace.",
      })),
    );

    this.docs = new DocsEndpoint(this, 'Docs', { api: this.api, logGroup: this.functionLogs });
    this.console = new ConsoleEndpoint(this, 'Console', {
      api: this.api,
      frameAncestors,
      consoleOidc: props.consoleOidc,
      consoleUrl: this.portalLinks.consoleUrl,
      logGroup: this.functionLogs,
    });

    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          "Each operation validates path, query and body against the contract's zod schemas before it runs, so every 400 is one problem+json with the zod issues (docs/behaviour.md#problem-documents) and the local stack, which has no gateway, answers exactly as the deployed one. A gateway model would be a second, weaker copy of those schemas (draft-04 cannot express rules such as the webhook URL checks) with a different error body.",
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Clients are workspace API tokens (Authorization: Bearer <token>, docs/architecture.md#authorizer), verified by the Lambda TOKEN authorizer; the service has no Cognito users. The docs and console routes are public by design.',
      },
    );
    Validations.of(this.api.deploymentStage).acknowledge(
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'WAF is a platform decision with its own cost: every operation requires a token, per-token quotas and stage throttling bound the load, and a web ACL can be associated with the stage without changing this stack (its refusals are already answered as problem+json).',
      },
      {
        id: 'AwsSolutions-APIG6',
        reason:
          "Execution logging is off: JSON access logs (with authorizer and integration errors), X-Ray tracing and the functions' structured logs cover each request. Access logging itself requires the region's API Gateway account setting cloudWatchRoleArn (a role API Gateway assumes to write logs); without it the deploy rolls back with 'CloudWatch Logs role ARN must be set in account settings'. The stage setting apiGatewayAccountRole=true makes this stack create that account-wide role (retained on delete); otherwise the account must have it (npm run preflight checks).",
      },
    );
  }

  private addOperationMethod(def: OperationDef, fn: ServiceFunction): Method {
    // By the route's kind (docs/architecture.md#route-kinds): the TOKEN authorizer, API Gateway's own
    // SigV4 check (the resource policy then names who may call), or nothing.
    const kind = routeKind(def);
    const auth =
      kind === 'token'
        ? { authorizationType: AuthorizationType.CUSTOM, authorizer: this.authorizer }
        : { authorizationType: kind === 'iam' ? AuthorizationType.IAM : AuthorizationType.NONE };
    // allowTestInvoke false: the console's test-invoke skips the authorizer; no permission for it.
    const method = this.api.root
      .resourceForPath(def.path)
      .addMethod(def.method, new LambdaIntegration(fn.function, { allowTestInvoke: false }), {
        operationName: def.operationId,
        ...auth,
      });
    if (kind === 'public') {
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Public by design (docs/architecture.md#route-kinds): the route is what a person without a token calls (opening a portal link: docs/behaviour.md#portal-sessions; staff signing in with the identity provider: docs/behaviour.md#staff-sign-in); it checks its own credential in the body, answers no-store, and its rate limit is keyed by the client address.',
      });
    }
    return method;
  }
}

/**
 * The API's resource policy (docs/architecture.md#route-kinds): every route may be invoked (the
 * token and public routes need this once a policy exists), and `/platform/*` is explicitly denied
 * to every principal not in `principals`, so a same-account principal that has
 * `execute-api:Invoke` from its own IAM policy still cannot call it. No principals: all denied.
 */
function platformResourcePolicy(principals: readonly string[]): PolicyDocument {
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        effect: Effect.ALLOW,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: ['execute-api:/*'],
      }),
      new PolicyStatement({
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['execute-api:Invoke'],
        resources: [PLATFORM_RESOURCE],
        ...(principals.length ? { conditions: { StringNotEquals: { 'aws:PrincipalArn': [...principals] } } } : {}),
      }),
    ],
  });
}

/** The stage's access log line: one JSON object per request. */
function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      extendedRequestId: AccessLogField.contextExtendedRequestId(),
      xrayTraceId: AccessLogField.contextXrayTraceId(),
      requestTime: AccessLogField.contextRequestTime(),
      ip: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      httpMethod: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      path: AccessLogField.contextPath(),
      protocol: AccessLogField.contextProtocol(),
      status: AccessLogField.contextStatus(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      integrationStatus: AccessLogField.contextIntegrationStatus(),
      // The token id (never the token): who called.
      principalId: AccessLogField.contextAuthorizerPrincipalId(),
      authorizerLatency: AccessLogField.contextAuthorizerLatency(),
      authorizerError: AccessLogField.contextAuthorizerError(),
      errorType: AccessLogField.contextErrorResponseType(),
      errorMessage: AccessLogField.contextErrorMessage(),
    }),
  );
}

function pascal(camel: string): string {
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}
