/**
 * The service quotas the stage's settings rely on, though no deploy fails on them: an API stage
 * throttled above the account's regional throttle, dispatcher caps that could take all the unreserved
 * Lambda concurrency, a provisioned table scaling past the table-level throughput limit. The account's
 * applied values come from Service Quotas; where it does not answer, the documented defaults.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { GetServiceQuotaCommand, ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import type { StackTemplate } from '../../lib/synth-template';
import { resourcesOfType, type CheckResult, type Target } from './check';
import { accountConcurrency, concurrencyIncreaseCommand, reservationsOf } from './concurrency';

const NAME = 'Service quotas';

/** A quota of Service Quotas, with its documented default. */
interface Quota {
  readonly service: string;
  readonly code: string;
  readonly label: string;
  readonly defaultValue: (region: string) => number;
}

/** Regions whose default API Gateway throttle is 2,500 requests a second (burst 1,250) instead of 10,000 (5,000). */
const SMALL_API_THROTTLE_REGIONS = new Set([
  'af-south-1',
  'eu-south-1',
  'ap-southeast-3',
  'me-central-1',
  'ap-south-2',
  'ap-southeast-4',
  'eu-south-2',
  'eu-central-2',
  'il-central-1',
  'ca-west-1',
  'ap-southeast-5',
  'ap-southeast-7',
  'mx-central-1',
]);

/** The quotas this check reads. */
export const QUOTAS = {
  apiRate: {
    service: 'apigateway',
    code: 'L-8A5B8E43',
    label: 'API Gateway throttle rate (requests a second, the account in the region)',
    defaultValue: (region) => (SMALL_API_THROTTLE_REGIONS.has(region) ? 2500 : 10_000),
  },
  apiBurst: {
    service: 'apigateway',
    code: 'L-CDF5615A',
    label: 'API Gateway throttle burst (the account in the region)',
    defaultValue: (region) => (SMALL_API_THROTTLE_REGIONS.has(region) ? 1250 : 5000),
  },
  tableRead: { service: 'dynamodb', code: 'L-CF0CBE56', label: 'DynamoDB table-level read throughput', defaultValue: () => 40_000 },
  tableWrite: { service: 'dynamodb', code: 'L-AB614373', label: 'DynamoDB table-level write throughput', defaultValue: () => 40_000 },
} satisfies Record<string, Quota>;

/** The account's value of a quota, or its documented default when Service Quotas does not answer. */
async function quotaValue(serviceQuotas: ServiceQuotasClient, quota: Quota, region: string): Promise<{ value: number; applied: boolean }> {
  try {
    const { Quota } = await serviceQuotas.send(new GetServiceQuotaCommand({ ServiceCode: quota.service, QuotaCode: quota.code }));
    if (typeof Quota?.Value === 'number') return { value: Quota.Value, applied: true };
  } catch {
    // No Service Quotas rights, or a quota it does not list for the account: the documented default stands.
  }
  return { value: quota.defaultValue(region), applied: false };
}

/** A finding of this check: what is wrong, and the command that fixes it. */
interface Finding {
  readonly detail: string;
  readonly fix?: string;
}

const increase = (target: Target, quota: Quota, desired: number) =>
  `aws service-quotas request-service-quota-increase --service-code ${quota.service} --quota-code ${quota.code} --desired-value ${desired} --region ${target.region} ${target.profileFlag}`.trim();

/** The stage's API throttling (its `*` method settings) over the account's throttle quota. */
async function apiThrottling(serviceQuotas: ServiceQuotasClient, target: Target, template: StackTemplate): Promise<Finding[]> {
  const settings = resourcesOfType(template, 'AWS::ApiGateway::Stage').flatMap(
    ([, stage]) =>
      (stage.Properties?.MethodSettings as { ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number }[] | undefined) ?? [],
  );
  const findings: Finding[] = [];
  for (const [quota, setting, key] of [
    [QUOTAS.apiRate, Math.max(0, ...settings.map((s) => s.ThrottlingRateLimit ?? 0)), 'throttlingRateLimit'],
    [QUOTAS.apiBurst, Math.max(0, ...settings.map((s) => s.ThrottlingBurstLimit ?? 0)), 'throttlingBurstLimit'],
  ] as const) {
    if (setting === 0) continue;
    const { value, applied } = await quotaValue(serviceQuotas, quota, target.region);
    if (setting > value)
      findings.push({
        detail:
          `${key} ${setting} is over the ${quota.label}: ${value}${applied ? '' : ' (the documented default)'}, shared by every API of the region; API Gateway throttles at the quota.` +
          (quota === QUOTAS.apiBurst ? ` AWS sets the burst quota from the rate quota: set ${key} to ${value} at most.` : ''),
        ...(quota === QUOTAS.apiBurst ? {} : { fix: increase(target, quota, setting) }),
      });
  }
  return findings;
}

/** The event sources' caps against the unreserved concurrency the stage leaves. */
async function lambdaCaps(lambda: LambdaClient, target: Target, template: StackTemplate): Promise<Finding[]> {
  const caps = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').flatMap(([id, mapping]) => {
    const cap = (mapping.Properties?.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency;
    return typeof cap === 'number' ? [[id, cap] as const] : [];
  });
  if (caps.length === 0) return [];
  const { limit } = await accountConcurrency(lambda);
  const reserved = reservationsOf(template).reduce((sum, [, n]) => sum + n, 0);
  const shared = limit - reserved;
  const total = caps.reduce((sum, [, n]) => sum + n, 0);
  if (total < shared) return [];
  return [
    {
      detail: `The queue consumers' caps add up to ${total} concurrent executions, and at most ${Math.max(0, shared)} of the account's ${limit} are left to every unreserved function: a burst of deliveries can take them all, and the API, its authorizer and the publisher are throttled meanwhile.`,
      fix: concurrencyIncreaseCommand(target, Math.max(1000, limit + total)),
    },
  ];
}

/** A provisioned table's capacity bounds (table and each index) over the table-level throughput quotas. */
async function tableThroughput(serviceQuotas: ServiceQuotasClient, target: Target, template: StackTemplate): Promise<Finding[]> {
  const targets = resourcesOfType(template, 'AWS::ApplicationAutoScaling::ScalableTarget').filter(
    ([, t]) => t.Properties?.ServiceNamespace === 'dynamodb',
  );
  const findings: Finding[] = [];
  for (const [quota, unit] of [
    [QUOTAS.tableRead, 'ReadCapacityUnits'],
    [QUOTAS.tableWrite, 'WriteCapacityUnits'],
  ] as const) {
    const max = Math.max(
      0,
      ...targets
        .filter(([, t]) => String(t.Properties?.ScalableDimension).endsWith(unit))
        .map(([, t]) => Number(t.Properties?.MaxCapacity)),
    );
    if (max === 0) continue;
    const { value, applied } = await quotaValue(serviceQuotas, quota, target.region);
    if (max > value)
      findings.push({
        detail: `tableCapacity lets ${unit} scale to ${max}, over the ${quota.label}: ${value}${applied ? '' : ' (the documented default)'}; auto scaling stops at the quota.`,
        fix: increase(target, quota, max),
      });
  }
  return findings;
}

/** Checks the quotas the stage's settings rely on; a finding is a warning, not a failure. */
export async function checkServiceQuotas(
  clients: { readonly serviceQuotas: ServiceQuotasClient; readonly lambda: LambdaClient },
  target: Target,
  template: StackTemplate,
): Promise<CheckResult> {
  const findings = [
    ...(await apiThrottling(clients.serviceQuotas, target, template)),
    ...(await lambdaCaps(clients.lambda, target, template)),
    ...(await tableThroughput(clients.serviceQuotas, target, template)),
  ];
  if (findings.length === 0)
    return {
      name: NAME,
      status: 'ok',
      summary: "the API throttling, the queue consumers' caps and the table's capacity fit the account's quotas",
    };
  return {
    name: NAME,
    status: 'warn',
    summary: `${findings.length} setting${findings.length === 1 ? '' : 's'} ask${findings.length === 1 ? 's' : ''} for more than the account's quotas give (the deploy still succeeds)`,
    details: findings.map((f) => f.detail),
    fix: findings.flatMap((f) => (f.fix ? [f.fix] : [])),
  };
}
