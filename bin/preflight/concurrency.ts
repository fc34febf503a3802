/**
 * The Lambda concurrency the stage reserves. Lambda refuses a reservation that would leave fewer
 * than {@link UNRESERVED_MINIMUM} of the account's concurrent executions unreserved, so in a new or
 * low-quota account (10 concurrent executions) the deploy fails on the MCP function's reservation.
 */
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM } from '#lambdas/contract/deployment';
import type { StackTemplate } from '../../lib/synth-template';
import { resourcesOfType, type CheckResult, type Target } from './check';
import { listStackResources } from './stack-resources';

const NAME = 'Lambda concurrency';

/** The concurrent executions Lambda keeps unreserved in every account and region. */
const UNRESERVED_MINIMUM = LAMBDA_UNRESERVED_CONCURRENCY_MINIMUM;

/** The stage setting behind each reserving function, by the start of its logical id. */
const RESERVATION_SETTINGS: readonly [prefix: string, setting: string][] = [
  ['Mcp', 'mcpReservedConcurrency'],
  ['DeliveryPublisher', 'publisherReservedConcurrency'],
];

/** The Service Quotas code of Lambda's concurrent executions. */
const LAMBDA_CONCURRENCY_QUOTA = 'L-B99A9384';

/** The functions of a template that reserve concurrency, as [logical id, reservation]. */
export function reservationsOf(template: StackTemplate): [string, number][] {
  return resourcesOfType(template, 'AWS::Lambda::Function').flatMap(([id, fn]) => {
    const reserved = fn.Properties?.ReservedConcurrentExecutions;
    return typeof reserved === 'number' ? [[id, reserved] as [string, number]] : [];
  });
}

/** The account's concurrency: its quota and what no function has reserved. */
export async function accountConcurrency(lambda: LambdaClient): Promise<{ limit: number; unreserved: number }> {
  const { AccountLimit } = await lambda.send(new GetAccountSettingsCommand({}));
  return { limit: AccountLimit?.ConcurrentExecutions ?? 0, unreserved: AccountLimit?.UnreservedConcurrentExecutions ?? 0 };
}

/**
 * What the stack's deployed functions reserve now (of the functions the template reserves for): a
 * redeploy hands that back before reserving again.
 */
async function reservedNow(
  clients: { readonly lambda: LambdaClient; readonly cloudFormation: CloudFormationClient },
  target: Target,
  logicalIds: readonly string[],
): Promise<number> {
  const deployed = (await listStackResources(clients.cloudFormation, target.stackName)).filter(
    (r) => r.ResourceType === 'AWS::Lambda::Function' && logicalIds.includes(r.LogicalResourceId ?? '') && r.PhysicalResourceId,
  );
  let total = 0;
  for (const fn of deployed) {
    const { ReservedConcurrentExecutions } = await clients.lambda.send(
      new GetFunctionConcurrencyCommand({ FunctionName: fn.PhysicalResourceId }),
    );
    total += ReservedConcurrentExecutions ?? 0;
  }
  return total;
}

/** The command that asks for a concurrency quota of `desired` in `target`'s region. */
export function concurrencyIncreaseCommand(target: Target, desired: number): string {
  return `aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${LAMBDA_CONCURRENCY_QUOTA} --desired-value ${desired} --region ${target.region} ${target.profileFlag}`.trim();
}

/** Checks that the account can grant the reservations of the template. */
export async function checkConcurrency(
  clients: { readonly lambda: LambdaClient; readonly cloudFormation: CloudFormationClient },
  target: Target,
  template: StackTemplate,
): Promise<CheckResult> {
  const reservations = reservationsOf(template);
  const { limit, unreserved } = await accountConcurrency(clients.lambda);
  if (reservations.length === 0)
    return { name: NAME, status: 'ok', summary: `no reservation (the account's quota: ${limit} concurrent executions)` };
  const needed = reservations.reduce((sum, [, n]) => sum + n, 0);
  const pool =
    unreserved +
    (await reservedNow(
      clients,
      target,
      reservations.map(([id]) => id),
    ));
  const left = pool - needed;
  // Logical ids end in a hash of the construct path; the name before it is what a reader knows.
  const listed = reservations.map(([id, n]) => `${id.replace(/[0-9A-F]{8}$/, '')} ${n}`).join(', ');
  if (left >= UNRESERVED_MINIMUM)
    return {
      name: NAME,
      status: 'ok',
      summary: `reserves ${needed} (${listed}) of ${limit}, leaving ${left} unreserved (Lambda keeps at least ${UNRESERVED_MINIMUM})`,
    };
  const settings = RESERVATION_SETTINGS.filter(([prefix]) => reservations.some(([id]) => id.startsWith(prefix))).map(
    ([, setting]) => `-c ${setting}=null`,
  );
  return {
    name: NAME,
    status: 'fail',
    summary:
      pool > UNRESERVED_MINIMUM
        ? `the stage reserves ${needed} (${listed}) but only ${pool - UNRESERVED_MINIMUM} of the account's ${limit} concurrent executions can be reserved`
        : `the stage reserves ${needed} (${listed}) and the account's ${limit} concurrent executions leave none to reserve`,
    details: [
      `Lambda keeps ${UNRESERVED_MINIMUM} concurrent executions unreserved; ${pool} are unreserved now, so reserving ${needed} would leave ${Math.max(left, 0)} and the deploy would fail.`,
      settings.length > 0
        ? `Deploy the functions unreserved (${settings.join(' ')}, or set them to null in the stage's settings file), or ask for a higher quota (granted in hours to days):`
        : "Lower the stage's reservations, or ask for a higher quota (granted in hours to days):",
    ],
    fix: [concurrencyIncreaseCommand(target, Math.max(1000, limit + UNRESERVED_MINIMUM - left))],
  };
}
