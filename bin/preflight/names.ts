/**
 * The names the stack fixes (the bus `webhooks-<stage>`, the dashboard, the alarms, any other explicit
 * physical name of the template) must be free, or already this stack's: CloudFormation fails the
 * create of a named resource that exists, and rolls the whole deploy back, only once it gets there.
 */
import { DescribeStackResourcesCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, GetDashboardCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { StackTemplate } from '../../lib/synth-template';
import { errorName, fixedString, type CheckResult, type Target } from './check';
import { listStackResources } from './stack-resources';

const NAME = 'Fixed names';

/** The clients the lookups use. */
export interface NameClients {
  readonly cloudFormation: CloudFormationClient;
  readonly eventBridge: EventBridgeClient;
  readonly cloudWatch: CloudWatchClient;
}

/** How to find and delete one kind of named resource. */
interface NamedKind {
  /** The property holding the name. */
  readonly property: string;
  /** What a reader calls it. */
  readonly label: string;
  /** The names of `names` that exist in the account and region. */
  readonly existing: (clients: NameClients, names: string[]) => Promise<Set<string>>;
  /** The commands that delete the stray resources, with `flags` (region and profile). */
  readonly deleteCommands: (names: string[], flags: string) => string[];
}

const NOT_FOUND = new Set(['ResourceNotFoundException', 'ResourceNotFound', 'DashboardNotFoundError']);

/** Looks each name up one by one; a not-found error means the name is free. */
const oneByOne =
  (lookup: (clients: NameClients, name: string) => Promise<unknown>) =>
  async (clients: NameClients, names: string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    for (const name of names) {
      try {
        await lookup(clients, name);
        found.add(name);
      } catch (error) {
        if (!NOT_FOUND.has(errorName(error))) throw error;
      }
    }
    return found;
  };

/** Alarms, a hundred names a call. */
async function existingAlarms(clients: NameClients, names: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < names.length; i += 100) {
    const { MetricAlarms, CompositeAlarms } = await clients.cloudWatch.send(
      new DescribeAlarmsCommand({ AlarmNames: names.slice(i, i + 100), AlarmTypes: ['MetricAlarm', 'CompositeAlarm'] }),
    );
    for (const alarm of [...(MetricAlarms ?? []), ...(CompositeAlarms ?? [])]) if (alarm.AlarmName) found.add(alarm.AlarmName);
  }
  return found;
}

const ALARM: NamedKind = {
  property: 'AlarmName',
  label: 'alarm',
  existing: existingAlarms,
  deleteCommands: (names, flags) => [`aws cloudwatch delete-alarms --alarm-names ${names.join(' ')} ${flags}`],
};

/** The resource types whose explicit name must be unique in the account and region, and how to check it. */
const NAMED_KINDS: Record<string, NamedKind> = {
  'AWS::Events::EventBus': {
    property: 'Name',
    label: 'event bus',
    existing: oneByOne((clients, name) => clients.eventBridge.send(new DescribeEventBusCommand({ Name: name }))),
    deleteCommands: (names, flags) => names.map((n) => `aws events delete-event-bus --name ${n} ${flags}`),
  },
  'AWS::CloudWatch::Dashboard': {
    property: 'DashboardName',
    label: 'dashboard',
    existing: oneByOne((clients, name) => clients.cloudWatch.send(new GetDashboardCommand({ DashboardName: name }))),
    deleteCommands: (names, flags) => [`aws cloudwatch delete-dashboards --dashboard-names ${names.join(' ')} ${flags}`],
  },
  'AWS::CloudWatch::Alarm': ALARM,
  'AWS::CloudWatch::CompositeAlarm': ALARM,
};

/**
 * Other types whose name property, when the template sets it, is unique in the account and region.
 * The check has no lookup for them yet: a fixed name of one of these is reported as not checked.
 */
const UNCHECKED_NAME_PROPERTIES: Record<string, string> = {
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::KMS::Alias': 'AliasName',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::StepFunctions::StateMachine': 'StateMachineName',
  'AWS::Scheduler::Schedule': 'Name',
};

/** A name the template fixes. */
export interface FixedName {
  readonly type: string;
  readonly logicalId: string;
  readonly name: string;
}

/** Every explicit physical name of the template, resolved for `target` (names made from other resources are unique already). */
export function fixedNamesOf(template: StackTemplate, target: Target): FixedName[] {
  return Object.entries(template.Resources).flatMap(([logicalId, resource]) => {
    const property = NAMED_KINDS[resource.Type]?.property ?? UNCHECKED_NAME_PROPERTIES[resource.Type];
    const name = property === undefined ? undefined : fixedString(resource.Properties?.[property], target);
    return name === undefined ? [] : [{ type: resource.Type, logicalId, name }];
  });
}

/** The stack that owns a physical resource, if CloudFormation knows one. */
async function ownerOf(cloudFormation: CloudFormationClient, physicalId: string): Promise<string | undefined> {
  try {
    const { StackResources } = await cloudFormation.send(new DescribeStackResourcesCommand({ PhysicalResourceId: physicalId }));
    return StackResources?.[0]?.StackName;
  } catch {
    return undefined;
  }
}

/** Checks that every fixed name is free, or already a resource of the stage's stack. */
export async function checkNames(clients: NameClients, target: Target, template: StackTemplate): Promise<CheckResult> {
  const names = fixedNamesOf(template, target);
  const ours = new Set(
    (await listStackResources(clients.cloudFormation, target.stackName)).map((r) => `${r.ResourceType} ${r.PhysicalResourceId}`),
  );
  const flags = `--region ${target.region} ${target.profileFlag}`.trim();
  const taken: { name: FixedName; kind: NamedKind; owner: string | undefined }[] = [];
  const unchecked: FixedName[] = [];
  const byKind = new Map<NamedKind, FixedName[]>();
  for (const name of names) {
    const kind = NAMED_KINDS[name.type];
    if (kind) byKind.set(kind, [...(byKind.get(kind) ?? []), name]);
    else unchecked.push(name);
  }
  for (const [kind, list] of byKind) {
    const existing = await kind.existing(clients, [...new Set(list.map((n) => n.name))]);
    for (const name of list)
      if (existing.has(name.name) && !ours.has(`${name.type} ${name.name}`))
        taken.push({ name, kind, owner: await ownerOf(clients.cloudFormation, name.name) });
  }
  const checked = names.length - unchecked.length;
  const notChecked = unchecked.map(
    (n) => `${n.type} ${n.name} (${n.logicalId}) is not checked: the pre-flight has no lookup for ${n.type} yet.`,
  );
  if (taken.length === 0)
    return unchecked.length === 0
      ? { name: NAME, status: 'ok', summary: `${checked} names free or already ${target.stackName}'s (the bus, the dashboard, the alarms)` }
      : {
          name: NAME,
          status: 'warn',
          summary: `${checked} names free or already ${target.stackName}'s; ${unchecked.length} not checked`,
          details: notChecked,
        };
  const fix: string[] = [];
  for (const kind of new Set(taken.map((t) => t.kind))) {
    const stray = taken.filter((t) => t.kind === kind && t.owner === undefined).map((t) => t.name.name);
    if (stray.length > 0) fix.push(...kind.deleteCommands(stray, flags));
  }
  for (const owner of new Set(taken.flatMap((t) => (t.owner ? [t.owner] : []))))
    fix.push(`aws cloudformation delete-stack --stack-name ${owner} ${flags}`);
  return {
    name: NAME,
    status: 'fail',
    summary: `${taken.length} of the stack's ${names.length} fixed names ${taken.length === 1 ? 'is' : 'are'} taken by resources that are not ${target.stackName}'s`,
    details: [
      ...taken.map(
        (t) => `${t.kind.label} ${t.name.name}: ${t.owner ? `belongs to the stack ${t.owner}` : 'exists outside any CloudFormation stack'}`,
      ),
      'CloudFormation would fail to create them and roll the deploy back. Deploy under another stage name (-c stage=<name>), or delete what holds the names, once sure nothing uses it:',
      ...notChecked,
    ],
    fix,
  };
}
