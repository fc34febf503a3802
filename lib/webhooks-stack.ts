/**
 * The service's stack. It only composes constructs (docs/architecture.md#components); behaviour lives
 * in lib/constructs/ and configuration in lib/config.ts.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ENV } from '#lambdas/contract/deployment';
import { quotasOf, removalPolicyOf, retentionOf, tableBillingOf, workspaceLimitsOf, type WebhooksConfig } from './config';
import { Dashboard } from './constructs/dashboard';
import { DeliveryPipeline } from './constructs/delivery-pipeline';
import { McpEndpoint } from './constructs/mcp-endpoint';
import { Monitoring } from './constructs/monitoring';
import { Outbox } from './constructs/outbox';
import { RecoveryJobs } from './constructs/recovery-jobs';
import { ServiceApi } from './constructs/rest-api';
import { Schedules } from './constructs/schedules';
import { SecretsKey } from './constructs/secrets-key';
import { ServiceFunction } from './constructs/service-function';
import { ServiceTable } from './constructs/table';

/** Properties of a {@link WebhooksStack}. */
export interface WebhooksStackProps extends StackProps {
  /** The validated deployment configuration (see {@link loadConfig}). */
  readonly config: WebhooksConfig;
}

/**
 * The webhook delivery service: the table, the delivery pipeline (bus, rule,
 * publisher, queue, dispatcher, dead letters), the REST API with its functions
 * and its public docs and console routes, the MCP endpoint (its own function
 * URL), the scheduled jobs, the alarms and the dashboard.
 */
export class WebhooksStack extends Stack {
  /** The service table. */
  readonly table: ServiceTable;
  /** The KMS key sealing endpoint signing secrets (docs/architecture.md#secrets). */
  readonly secretsKey: SecretsKey;
  /** The bus, the queues, the publisher, the dispatcher and the dead-letter consumer. */
  readonly pipeline: DeliveryPipeline;
  /** The jobs queue and the recovery job worker. */
  readonly recovery: RecoveryJobs;
  /** The outbox of the service's own domain events and its relay to the bus (docs/architecture.md#outbox). */
  readonly outbox: Outbox;
  /** The REST API. */
  readonly api: ServiceApi;
  /** The MCP server's function and its function URL. */
  readonly mcp: McpEndpoint;
  /** Retention, grace-window expiry and stuck-pending repair. */
  readonly schedules: Schedules;
  /** The alarms (and their topic, with `alarmEmail`). */
  readonly monitoring: Monitoring;
  /** The stage's CloudWatch dashboard. */
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: WebhooksStackProps) {
    super(scope, id, props);
    const { config } = props;
    const removalPolicy = removalPolicyOf(config);
    const logRetention = retentionOf(config);

    const logs = { logRetention, logRemovalPolicy: removalPolicy };

    this.table = new ServiceTable(this, 'Data', { removalPolicy, billing: tableBillingOf(config) });
    // Kept as long as the table: its sealed secrets are unreadable without the key.
    this.secretsKey = new SecretsKey(this, 'Secrets', { removalPolicy });
    this.pipeline = new DeliveryPipeline(this, 'Delivery', {
      table: this.table,
      eventBusName: `webhooks-${config.stage}`,
      secretsKey: this.secretsKey,
      dispatcherBatchSize: config.dispatcherBatchSize,
      dispatcherMaxConcurrency: config.dispatcherMaxConcurrency,
      deadLetterMaxConcurrency: config.deadLetterMaxConcurrency,
      publisherReservedConcurrency: config.publisherReservedConcurrency,
      ...logs,
    });
    this.recovery = new RecoveryJobs(this, 'Recovery', {
      table: this.table,
      deliveryQueue: this.pipeline.queue,
      ratePerSecond: config.recoveryRatePerSecond,
      ...logs,
    });
    this.outbox = new Outbox(this, 'Outbox', { eventBus: this.pipeline.eventBus, stage: config.stage, removalPolicy, ...logs });
    // The dispatchers write `webhook.disabled` with the auto-disable itself.
    for (const dispatcher of [this.pipeline.dispatcher, this.pipeline.slowDispatcher]) this.outbox.addWriter(dispatcher);
    const operationResources = {
      deliveryQueue: this.pipeline.queue,
      outbox: this.outbox,
      jobQueue: this.recovery.queue,
      recoveryJobsPerWorkspace: config.recoveryJobsPerWorkspace,
      secretsKey: this.secretsKey,
    };
    const quotas = quotasOf(config);
    const workspaceLimits = workspaceLimitsOf(config);
    this.api = new ServiceApi(this, 'Api', {
      table: this.table,
      ...operationResources,
      stageName: config.stage,
      quotas,
      workspaceLimits,
      authorizerCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
      throttlingRateLimit: config.throttlingRateLimit,
      throttlingBurstLimit: config.throttlingBurstLimit,
      apiGatewayAccountRole: config.apiGatewayAccountRole,
      platformPrincipals: config.platformPrincipals,
      consoleFrameAncestors: config.consoleFrameAncestors,
      consoleOidc: config.consoleOidc,
      ...logs,
    });
    this.mcp = new McpEndpoint(this, 'Mcp', {
      table: this.table,
      ...operationResources,
      portalLinks: this.api.portalLinks,
      quotas,
      workspaceLimits,
      allowedOrigins: config.mcpAllowedOrigins,
      reservedConcurrency: config.mcpReservedConcurrency,
      ...logs,
    });
    this.schedules = new Schedules(this, 'Schedules', { table: this.table, deliveryQueue: this.pipeline.queue, ...logs });
    const monitored = {
      stage: config.stage,
      deliveryQueue: this.pipeline.queue,
      slowDeliveryQueue: this.pipeline.slowQueue,
      deadLetterQueue: this.pipeline.deadLetterQueue,
      publishFailures: this.pipeline.publishFailures,
      recoveryDeadLetterQueue: this.recovery.deadLetterQueue,
      dispatcher: this.pipeline.dispatcher,
      slowDispatcher: this.pipeline.slowDispatcher,
      publisher: this.pipeline.publisher,
      deadLetterConsumer: this.pipeline.deadLetterConsumer,
      authorizer: this.api.authorizerFunction,
      mcp: this.mcp.handler,
      operations: [...this.api.operationFunctions.values()],
      scheduledJobs: [...this.schedules.functions.values()],
      recoveryWorker: this.recovery.worker,
      api: this.api.api,
      accessLogs: this.api.accessLogs,
      table: this.table.table,
    };
    this.monitoring = new Monitoring(this, 'Monitoring', {
      ...monitored,
      deliverySuccessRateAlarmPercent: config.deliverySuccessRateAlarmPercent,
      alarmEmail: config.alarmEmail ?? undefined,
    });
    this.outbox.notify(this.monitoring.topic);
    this.dashboard = new Dashboard(this, 'Dashboard', { ...monitored, monitoring: this.monitoring });

    // Every function names its stage: the `stage` dimension of the metrics the dashboard and the alarms read.
    for (const fn of this.node.findAll()) if (fn instanceof ServiceFunction) fn.function.addEnvironment(ENV.STAGE, config.stage);

    // RestApi adds an unnamed `Endpoint` output of its own; ApiUrl below is the same value under a stable name.
    this.api.api.node.tryRemoveChild('Endpoint');
    const url = this.api.api.url;
    new CfnOutput(this, 'ApiUrl', { value: url, description: 'Base URL of the REST API (the stage URL)' });
    new CfnOutput(this, 'OpenApiUrl', { value: `${url}openapi.json`, description: 'The OpenAPI document generated from the contract' });
    new CfnOutput(this, 'ReferenceUrl', { value: `${url}reference`, description: 'The interactive API reference' });
    new CfnOutput(this, 'ConsoleUrl', {
      value: `${url}console`,
      description: 'The web console (sign in with the workspace slug and an API token)',
    });
    if (config.consoleOidc)
      new CfnOutput(this, 'ConsoleOidcRedirectUri', {
        // The console's address exactly as its page sends it in the authorization request (CONSOLE_URL).
        value: this.api.portalLinks.consoleUrl,
        description: `Staff sign-in: register this redirect URI for the client ${config.consoleOidc.clientId} at ${config.consoleOidc.issuer} (README: "Staff sign-in")`,
      });
    new CfnOutput(this, 'McpUrl', {
      value: this.mcp.functionUrl.url,
      description: 'The MCP server (Streamable HTTP, POST JSON-RPC) with Authorization: Bearer <workspace API token>',
    });
    new CfnOutput(this, 'PlatformApiUrl', {
      value: `${url}platform/`,
      description: "The platform API (SigV4, service execute-api): the workspace lifecycle for the platform's backend",
    });
    new CfnOutput(this, 'PlatformInvokePolicyArn', {
      value: this.api.platformInvokePolicy.managedPolicyArn,
      description:
        "Managed policy allowing exactly the platform API's routes: attach it to the backend's role, and name that role in platformPrincipals",
    });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName, description: 'The service table' });
    new CfnOutput(this, 'EventBusName', {
      value: this.pipeline.eventBus.eventBusName,
      description:
        'The domain-events bus: put events with detail-type = the event type and detail = {"workspace": <slug>, "payload": {...}}',
    });
    new CfnOutput(this, 'DeliveryQueueUrl', {
      value: this.pipeline.queue.queueUrl,
      description: 'The delivery queue (one message per delivery)',
    });
    new CfnOutput(this, 'DashboardName', {
      value: this.dashboard.dashboard.dashboardName,
      description: 'The CloudWatch dashboard of the stage in this region (docs/operations.md names its widgets)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'The SNS topic every alarm notifies on ALARM and on OK: subscribe a pager or chat integration to it',
    });
    new CfnOutput(this, 'SecretsKeyArn', {
      value: this.secretsKey.key.keyArn,
      description:
        'The KMS key sealing endpoint signing secrets: the table is unreadable without it, so a retained table keeps it (schedule its deletion only with the table)',
    });
  }
}
