/**
 * The service's stack. It only composes constructs (DESIGN §3); behaviour lives
 * in lib/constructs/ and configuration in lib/config.ts.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { quotasOf, removalPolicyOf, retentionOf, type WebhooksConfig } from './config';
import { ServiceApi } from './constructs/rest-api';
import { ServiceTable } from './constructs/table';

/** Properties of a {@link WebhooksStack}. */
export interface WebhooksStackProps extends StackProps {
  /** The validated deployment configuration (see {@link loadConfig}). */
  readonly config: WebhooksConfig;
}

/**
 * The webhook delivery service: the table and the REST API with its functions.
 * Later constructs (delivery pipeline, schedules, MCP endpoint, monitoring) are
 * added here the same way, sharing {@link WebhooksStack.table}.
 */
export class WebhooksStack extends Stack {
  /** The service table. */
  readonly table: ServiceTable;
  /** The REST API. */
  readonly api: ServiceApi;

  constructor(scope: Construct, id: string, props: WebhooksStackProps) {
    super(scope, id, props);
    const { config } = props;
    const removalPolicy = removalPolicyOf(config);
    const logRetention = retentionOf(config);

    this.table = new ServiceTable(this, 'Data', { removalPolicy });
    this.api = new ServiceApi(this, 'Api', {
      table: this.table,
      stageName: config.stage,
      quotas: quotasOf(config),
      authorizerCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
      throttlingRateLimit: config.throttlingRateLimit,
      throttlingBurstLimit: config.throttlingBurstLimit,
      logRetention,
      logRemovalPolicy: removalPolicy,
    });

    // RestApi adds an unnamed `Endpoint` output of its own; ApiUrl below is the same value under a stable name.
    this.api.api.node.tryRemoveChild('Endpoint');
    const url = this.api.api.url;
    new CfnOutput(this, 'ApiUrl', { value: url, description: 'Base URL of the REST API (the stage URL)' });
    new CfnOutput(this, 'OpenApiUrl', { value: `${url}openapi.json`, description: 'The OpenAPI document generated from the contract' });
    new CfnOutput(this, 'ReferenceUrl', { value: `${url}reference`, description: 'The interactive API reference' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName, description: 'The service table' });
  }
}
