/**
 * The AWS SDK clients of the pre-flight, made once with the command line's `--region` and
 * `--profile` (the SDK's default chain fills in what they leave out: `AWS_REGION`, `AWS_PROFILE`,
 * SSO, keys). Each check takes the ones it needs, so tests hand it mocked clients.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SSMClient } from '@aws-sdk/client-ssm';
import { STSClient } from '@aws-sdk/client-sts';

/** Every client a pre-flight check may use; all calls they make are read-only. */
export interface PreflightClients {
  readonly sts: STSClient;
  readonly ssm: SSMClient;
  readonly cloudFormation: CloudFormationClient;
  readonly apiGateway: APIGatewayClient;
  readonly lambda: LambdaClient;
  readonly eventBridge: EventBridgeClient;
  readonly cloudWatch: CloudWatchClient;
  readonly serviceQuotas: ServiceQuotasClient;
}

/** Where the clients point: both optional, as on the command line. */
export interface ClientOptions {
  readonly region?: string;
  readonly profile?: string;
}

/** The clients for a region and profile. */
export function createClients(options: ClientOptions): PreflightClients {
  const config = { ...(options.region ? { region: options.region } : {}), ...(options.profile ? { profile: options.profile } : {}) };
  return {
    sts: new STSClient(config),
    ssm: new SSMClient(config),
    cloudFormation: new CloudFormationClient(config),
    apiGateway: new APIGatewayClient(config),
    lambda: new LambdaClient(config),
    eventBridge: new EventBridgeClient(config),
    cloudWatch: new CloudWatchClient(config),
    serviceQuotas: new ServiceQuotasClient(config),
  };
}
