/**
 * An AWS account in a chosen state, for the pre-flight's tests: every client the pre-flight makes is
 * mocked (aws-sdk-client-mock replaces `send` on the client classes, so clients made anywhere answer
 * from here), and {@link setAccount} says what the account holds.
 */
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
  ListStackResourcesCommand,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DashboardNotFoundError, DescribeAlarmsCommand, GetDashboardCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEventBusCommand, EventBridgeClient, ResourceNotFoundException } from '@aws-sdk/client-eventbridge';
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetServiceQuotaCommand, NoSuchResourceException, ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { fixedString, type Target } from '../../bin/preflight/check';

export const ACCOUNT = '123456789012';
export const REGION = 'eu-west-1';
/** The target of the tests: this account and region, the stage `prod`, no profile. */
export const TARGET: Target = { account: ACCOUNT, region: REGION, partition: 'aws', stackName: 'Webhooks-prod', profileFlag: '' };
const ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/APIGatewayCloudWatchLogs`;

/** What the account holds; every field left out is as in a ready account. */
export interface AccountState {
  /** The bootstrap version in SSM; `null`: not bootstrapped (no parameter, no CDKToolkit stack). */
  readonly bootstrapVersion?: number | null;
  /** API Gateway's CloudWatch role; `null`: none set. */
  readonly cloudwatchRoleArn?: string | null;
  /** Lambda's concurrency: the quota and what is unreserved. */
  readonly concurrency?: { readonly limit: number; readonly unreserved: number };
  /** The stage's stack, if deployed: its status, resources and the functions' reservations by physical id. */
  readonly stack?: {
    readonly name: string;
    readonly status: string;
    readonly resources: StackResourceSummary[];
    readonly reserved?: Record<string, number>;
  };
  /** Event buses that exist, with the stack that owns each (`null`: made outside CloudFormation). */
  readonly buses?: Record<string, string | null>;
  readonly dashboards?: readonly string[];
  readonly alarms?: readonly string[];
  /** Service Quotas' applied values by quota code; a code left out is not listed (the default applies). */
  readonly quotas?: Record<string, number>;
}

const mocks = {
  sts: mockClient(STSClient),
  ssm: mockClient(SSMClient),
  cloudFormation: mockClient(CloudFormationClient),
  apiGateway: mockClient(APIGatewayClient),
  lambda: mockClient(LambdaClient),
  eventBridge: mockClient(EventBridgeClient),
  cloudWatch: mockClient(CloudWatchClient),
  serviceQuotas: mockClient(ServiceQuotasClient),
};

/** The mocks, for a test that makes one call fail or counts calls. */
export const accountMocks = mocks;

/** CloudFormation's answer for a stack that does not exist. */
const noStack = (name: string) => Object.assign(new Error(`Stack with id ${name} does not exist`), { name: 'ValidationError' });

/** Resets every mock and makes the account answer as `state` says. */
export function setAccount(state: AccountState = {}): void {
  for (const mock of Object.values(mocks)) mock.reset();
  const { stack } = state;
  mocks.sts.on(GetCallerIdentityCommand).resolves({ Account: ACCOUNT, Arn: `arn:aws:iam::${ACCOUNT}:user/platform`, UserId: 'AIDA' });

  const version = state.bootstrapVersion === undefined ? 29 : state.bootstrapVersion;
  if (version === null) mocks.ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'not found', $metadata: {} }));
  else mocks.ssm.on(GetParameterCommand).resolves({ Parameter: { Name: '/cdk-bootstrap/hnb659fds/version', Value: String(version) } });

  mocks.cloudFormation.on(DescribeStacksCommand).callsFake((input: { StackName?: string }) => {
    if (input.StackName === 'CDKToolkit' && version !== null)
      return { Stacks: [{ StackName: 'CDKToolkit', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date() }] };
    if (stack && input.StackName === stack.name)
      return { Stacks: [{ StackName: stack.name, StackStatus: stack.status, CreationTime: new Date() }] };
    throw noStack(input.StackName ?? '');
  });
  mocks.cloudFormation.on(ListStackResourcesCommand).callsFake((input: { StackName?: string }) => {
    if (stack && input.StackName === stack.name) return { StackResourceSummaries: stack.resources };
    throw noStack(input.StackName ?? '');
  });
  mocks.cloudFormation.on(DescribeStackResourcesCommand).callsFake((input: { PhysicalResourceId?: string }) => {
    const owner = state.buses?.[input.PhysicalResourceId ?? ''];
    if (owner)
      return {
        StackResources: [
          {
            StackName: owner,
            LogicalResourceId: 'Bus',
            ResourceType: 'AWS::Events::EventBus',
            Timestamp: new Date(),
            ResourceStatus: 'CREATE_COMPLETE',
          },
        ],
      };
    throw Object.assign(new Error(`Stack for ${input.PhysicalResourceId} does not exist`), { name: 'ValidationError' });
  });

  const role = state.cloudwatchRoleArn === undefined ? ROLE_ARN : state.cloudwatchRoleArn;
  mocks.apiGateway.on(GetAccountCommand).resolves(role === null ? {} : { cloudwatchRoleArn: role });

  const concurrency = state.concurrency ?? { limit: 1000, unreserved: 1000 };
  mocks.lambda
    .on(GetAccountSettingsCommand)
    .resolves({ AccountLimit: { ConcurrentExecutions: concurrency.limit, UnreservedConcurrentExecutions: concurrency.unreserved } });
  mocks.lambda.on(GetFunctionConcurrencyCommand).callsFake((input: { FunctionName?: string }) => ({
    ReservedConcurrentExecutions: stack?.reserved?.[input.FunctionName ?? ''],
  }));

  mocks.eventBridge.on(DescribeEventBusCommand).callsFake((input: { Name?: string }) => {
    if (input.Name && state.buses && input.Name in state.buses)
      return { Name: input.Name, Arn: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${input.Name}` };
    throw new ResourceNotFoundException({ message: `Event bus ${input.Name} does not exist.`, $metadata: {} });
  });
  mocks.cloudWatch.on(GetDashboardCommand).callsFake((input: { DashboardName?: string }) => {
    if (state.dashboards?.includes(input.DashboardName ?? '')) return { DashboardName: input.DashboardName, DashboardBody: '{}' };
    throw new DashboardNotFoundError({ message: 'Dashboard does not exist', $metadata: {} });
  });
  mocks.cloudWatch.on(DescribeAlarmsCommand).callsFake((input: { AlarmNames?: string[] }) => ({
    MetricAlarms: (input.AlarmNames ?? []).filter((n) => state.alarms?.includes(n)).map((AlarmName) => ({ AlarmName })),
    CompositeAlarms: [],
  }));
  mocks.serviceQuotas.on(GetServiceQuotaCommand).callsFake((input: { ServiceCode?: string; QuotaCode?: string }) => {
    const value = state.quotas?.[input.QuotaCode ?? ''];
    if (value === undefined) throw new NoSuchResourceException({ message: 'not listed', $metadata: {} });
    return { Quota: { ServiceCode: input.ServiceCode, QuotaCode: input.QuotaCode, Value: value } };
  });
}

/** The resources of a deployed stage's stack, made from its template (physical id = the fixed name where it has one). */
export function deployedResources(template: {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}): StackResourceSummary[] {
  const nameProperty: Record<string, string> = {
    'AWS::Events::EventBus': 'Name',
    'AWS::CloudWatch::Dashboard': 'DashboardName',
    'AWS::CloudWatch::Alarm': 'AlarmName',
  };
  return Object.entries(template.Resources).map(([id, r]) => {
    const name = fixedString(r.Properties?.[nameProperty[r.Type] ?? ''], TARGET);
    return {
      LogicalResourceId: id,
      PhysicalResourceId: name ?? `${TARGET.stackName}-${id}-ABC123`,
      ResourceType: r.Type,
      ResourceStatus: 'UPDATE_COMPLETE',
      LastUpdatedTimestamp: new Date(),
    };
  });
}
