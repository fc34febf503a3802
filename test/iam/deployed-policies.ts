/**
 * The synthesized stack as IAM sees it: each function's role policies and the resource policies
 * (queue policies, the key policy), with every intrinsic resolved to an ARN in a fixed fake
 * account; where the local stack's resources are on AWS; and an evaluation of a recorded call with
 * a real IAM policy evaluator (docs/architecture.md#the-iam-check).
 */
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { AwsCall, DeployedResources } from '../../bin/local/aws-call-recorder';
import { OPERATIONS } from '../../lambdas/contract/operations';
import { kebab } from '../../lambdas/contract/operations';
import { SCHEDULED_JOBS } from '../../lambdas/domain/scheduled-jobs';
import type { StackTemplate, TemplateResource } from '../../lib/synth-template';

const ACCOUNT = '123456789012';
/** The label of every table stream's ARN (`…:table/<id>/stream/<label>`): a stream's ARN is the table's and a creation time. */
const STREAM_LABEL = '2026-01-01T00:00:00.000';
const REGION = 'us-east-1';
const PARTITION = 'aws';

type Intrinsic = unknown;

/** A policy document with its intrinsics resolved. */
interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly Record<string, unknown>[];
}

/** A function of the template, by its Lambda entry. */
export interface DeployedFunction {
  readonly entry: string;
  readonly logicalId: string;
  readonly roleArn: string;
  readonly sessionArn: string;
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
  readonly environment: Readonly<Record<string, Intrinsic>>;
}

/** The deployed-side view of a synthesized template. */
export interface DeployedStack {
  readonly functions: ReadonlyMap<string, DeployedFunction>;
  /** Resource policies by resource ARN (queue policies, the key policy). */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
  /** Where the local stack's resources are on AWS; reads the local names from `env` when asked. */
  resources(env: NodeJS.ProcessEnv): DeployedResources;
}

/** The entries of the functions that are not REST operations or schedules, by their construct path. */
const ENTRY_BY_PATH: Readonly<Record<string, string>> = {
  'Delivery/Dispatcher': 'dispatcher',
  'Delivery/SlowDispatcher': 'slow-dispatcher',
  'Delivery/DeadLetterConsumer': 'dead-letter',
  'Delivery/Publisher': 'publisher',
  'Recovery/Worker': 'recovery-worker',
  'Outbox/Relay': 'outbox-relay',
  'Api/Authorizer': 'authorizer',
  'Api/Docs/Function': 'serve-docs',
  'Api/Console/Function': 'serve-console',
  'Mcp/Function': 'mcp',
};

const pascalEquals = (pascal: string, name: string) => pascal.toLowerCase() === name.replace(/-/g, '').toLowerCase();

/** The Lambda entry of the function at construct path `path` (below the stack). */
function entryOf(path: string): string {
  if (ENTRY_BY_PATH[path]) return ENTRY_BY_PATH[path];
  const [scope, id] = path.split('/').slice(-2) as [string, string];
  if (path.startsWith('Api/Operations/')) {
    const def = OPERATIONS.find((d) => pascalEquals(id, d.operationId));
    if (def) return kebab(def.operationId);
  }
  if (scope === 'Schedules') {
    const job = SCHEDULED_JOBS.find((j) => pascalEquals(id, j.entry));
    if (job) return job.entry;
  }
  throw new Error(`No Lambda entry known for the function at ${path}`);
}

/** Reads a synthesized template. */
export function deployedStack(template: StackTemplate): DeployedStack {
  const resources = template.Resources;
  const resource = (id: string): TemplateResource => {
    const r = resources[id];
    if (!r) throw new Error(`No resource ${id} in the template`);
    return r;
  };
  const arn = (service: string, rest: string) => `arn:${PARTITION}:${service}:${REGION}:${ACCOUNT}:${rest}`;
  const arnOf = (id: string): string => {
    const r = resource(id);
    switch (r.Type) {
      case 'AWS::DynamoDB::Table':
        return arn('dynamodb', `table/${id}`);
      case 'AWS::SQS::Queue':
        return arn('sqs', id);
      case 'AWS::Events::EventBus':
        return arn('events', `event-bus/${(r.Properties?.Name as string | undefined) ?? id}`);
      case 'AWS::Events::Rule':
        return arn('events', `rule/${id}`);
      case 'AWS::KMS::Key':
        return arn('kms', `key/${id}`);
      case 'AWS::Logs::LogGroup':
        return arn('logs', `log-group:${id}:*`);
      case 'AWS::IAM::Role':
        return `arn:${PARTITION}:iam::${ACCOUNT}:role/${id}`;
      case 'AWS::SNS::Topic':
        return arn('sns', id);
      case 'AWS::Lambda::Function':
        return arn('lambda', `function:${id}`);
      default:
        throw new Error(`No ARN known for ${id} (${r.Type})`);
    }
  };
  const refOf = (id: string): string => {
    const pseudo: Record<string, string> = {
      'AWS::Partition': PARTITION,
      'AWS::AccountId': ACCOUNT,
      'AWS::Region': REGION,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    if (pseudo[id]) return pseudo[id];
    const r = resource(id);
    switch (r.Type) {
      case 'AWS::SQS::Queue':
        return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${id}`;
      case 'AWS::Events::EventBus':
        return (r.Properties?.Name as string | undefined) ?? id;
      case 'AWS::DynamoDB::Table':
      case 'AWS::KMS::Key':
      case 'AWS::IAM::Role':
        return id;
      default:
        return arnOf(id);
    }
  };
  const resolve = (value: Intrinsic): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const v = value as Record<string, unknown>;
    if ('Ref' in v) return refOf(String(v.Ref));
    if ('Fn::GetAtt' in v) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      if (attribute === 'Arn') return arnOf(id);
      if (attribute === 'StreamArn') return `${arnOf(id)}/stream/${STREAM_LABEL}`;
      throw new Error(`Fn::GetAtt ${id}.${attribute} is not resolved`);
    }
    if ('Fn::Join' in v) {
      const [sep, parts] = v['Fn::Join'] as [string, Intrinsic[]];
      return parts.map((p) => String(resolve(p))).join(sep);
    }
    if ('Fn::Sub' in v) {
      const text = v['Fn::Sub'] as string;
      return text.replace(/\$\{([\w:]+)(?:\.(\w+))?\}/g, (_m, id: string, attr?: string) =>
        attr ? String(resolve({ 'Fn::GetAtt': [id, attr] })) : refOf(id),
      );
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  };

  const policiesOfRole = new Map<string, { name: string; policy: PolicyDocument }[]>();
  const resourcePolicies = new Map<string, PolicyDocument>();
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type === 'AWS::IAM::Policy') {
      for (const role of (r.Properties?.Roles ?? []) as { Ref: string }[]) {
        const list = policiesOfRole.get(role.Ref) ?? [];
        list.push({ name: id, policy: resolve(r.Properties?.PolicyDocument) as PolicyDocument });
        policiesOfRole.set(role.Ref, list);
      }
    }
    if (r.Type === 'AWS::SQS::QueuePolicy') {
      for (const queue of (r.Properties?.Queues ?? []) as { Ref: string }[])
        resourcePolicies.set(arnOf(queue.Ref), resolve(r.Properties?.PolicyDocument) as PolicyDocument);
    }
    if (r.Type === 'AWS::KMS::Key') resourcePolicies.set(arnOf(id), resolve(r.Properties?.KeyPolicy) as PolicyDocument);
  }

  const functions = new Map<string, DeployedFunction>();
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::Lambda::Function') continue;
    const roleId = (r.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const description = (resource(roleId).Properties?.Description as string | undefined) ?? '';
    const path = description.replace(/^Execution role of [^/]+\//, '');
    const entry = entryOf(path);
    const role = resource(roleId);
    if (role.Properties?.ManagedPolicyArns) throw new Error(`${roleId} has managed policies: the check reads inline policies only`);
    functions.set(entry, {
      entry,
      logicalId: id,
      roleArn: arnOf(roleId),
      sessionArn: `arn:${PARTITION}:sts::${ACCOUNT}:assumed-role/${roleId}/${id}`,
      policies: policiesOfRole.get(roleId) ?? [],
      environment: (r.Properties?.Environment as { Variables?: Record<string, Intrinsic> } | undefined)?.Variables ?? {},
    });
  }

  return {
    functions,
    resourcePolicies,
    resources(env) {
      // Each local name is the value the local stack gives a variable the template binds to a resource.
      const byLocalName = new Map<string, string>();
      for (const fn of functions.values()) {
        for (const [name, value] of Object.entries(fn.environment)) {
          const local = env[name];
          const ref = (value as { Ref?: string } | null)?.Ref ?? (value as { 'Fn::GetAtt'?: [string] } | null)?.['Fn::GetAtt']?.[0];
          if (local && ref && resources[ref]) byLocalName.set(`${name}=${local}`, ref);
        }
      }
      const logicalOf = (variables: readonly string[], local: string): string => {
        for (const v of variables) {
          const id = byLocalName.get(`${v}=${local}`);
          if (id) return id;
        }
        throw new Error(`No resource of the template is bound to the local ${local} (${variables.join(', ')})`);
      };
      const table = (name: string, index?: string) => {
        const id = logicalOf(['TABLE_NAME', 'RATE_LIMIT_TABLE_NAME', 'OUTBOX_TABLE_NAME'], name);
        const props = resource(id).Properties as {
          KeySchema: { AttributeName: string; KeyType: string }[];
          GlobalSecondaryIndexes?: { IndexName: string; KeySchema: { AttributeName: string; KeyType: string }[] }[];
        };
        const schema = index ? props.GlobalSecondaryIndexes?.find((g) => g.IndexName === index)?.KeySchema : props.KeySchema;
        if (!schema) throw new Error(`The table ${id} has no index ${index}`);
        return {
          arn: index ? `${arnOf(id)}/index/${index}` : arnOf(id),
          partitionKey: schema.find((k) => k.KeyType === 'HASH')!.AttributeName,
        };
      };
      const keyIds = new Set(
        [...functions.values()]
          .map((f) => f.environment.SECRETS_KEY_ID as { Ref?: string; 'Fn::GetAtt'?: [string] } | undefined)
          .map((v) => v?.Ref ?? v?.['Fn::GetAtt']?.[0])
          .filter((r): r is string => r !== undefined),
      );
      return {
        table,
        queue: (url) => arnOf(logicalOf(['DELIVERY_QUEUE_URL', 'SLOW_DELIVERY_QUEUE_URL', 'DEAD_LETTER_QUEUE_URL', 'JOB_QUEUE_URL'], url)),
        bus: (name) => arnOf(logicalOf(['EVENT_BUS_NAME'], name)),
        stream: (name) => `${table(name).arn}/stream/${STREAM_LABEL}`,
        onFailureQueue: (entry) => {
          const fn = functions.get(entry);
          const mapping = Object.values(resources).find(
            (r) =>
              r.Type === 'AWS::Lambda::EventSourceMapping' &&
              (r.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref === fn?.logicalId &&
              r.Properties?.DestinationConfig,
          );
          const destination = (mapping?.Properties?.DestinationConfig as { OnFailure?: { Destination?: Intrinsic } } | undefined)?.OnFailure
            ?.Destination;
          if (!destination) throw new Error(`No event source mapping of ${entry} has an on-failure destination`);
          return String(resolve(destination));
        },
        key: () => {
          if (keyIds.size !== 1) throw new Error(`Expected one secrets key in the template, found ${keyIds.size}`);
          return arnOf([...keyIds][0]!);
        },
      };
    },
  };
}

/** What IAM says of one recorded call. */
export interface Verdict {
  readonly call: AwsCall;
  readonly result: string;
  readonly errors?: string;
}

/**
 * `kms:EncryptionContext:<key>` under a name the evaluator matches: iam-simulate drops a request's
 * `kms:EncryptionContext:<key>` (it matches only `/`-separated variable keys, e.g.
 * `aws:PrincipalTag/<key>`), so the key is renamed alike in the policies' conditions and in the
 * request; a single-valued string key either way, the decision is the same.
 */
const ENCRYPTION_CONTEXT = /^kms:EncryptionContext:(.+)$/i;
const aliasKey = (key: string) => key.replace(ENCRYPTION_CONTEXT, (_m, k: string) => `aws:PrincipalTag/kms-encryption-context-${k}`);

function withAliasedConditions(policy: PolicyDocument): PolicyDocument {
  return {
    ...policy,
    Statement: policy.Statement.map((statement) =>
      statement.Condition
        ? {
            ...statement,
            Condition: Object.fromEntries(
              Object.entries(statement.Condition as Record<string, Record<string, unknown>>).map(([operator, keys]) => [
                operator,
                Object.fromEntries(Object.entries(keys).map(([key, value]) => [aliasKey(key), value])),
              ]),
            ),
          }
        : statement,
    ),
  };
}

/**
 * Evaluates `call` with its function's role policies and the resource's policy, as IAM would
 * (`runSimulation` also validates it: the action exists, the ARN is one of its resource types, the
 * condition keys are the action's, the policies parse).
 */
export async function evaluate(stack: DeployedStack, call: AwsCall): Promise<Verdict> {
  const fn = stack.functions.get(call.function);
  if (!fn) return { call, result: 'NoSuchFunction' };
  const resourcePolicy = stack.resourcePolicies.get(call.resource.replace(/\/index\/.*$/, ''));
  const simulation: Simulation = {
    request: {
      principal: fn.sessionArn,
      action: call.action,
      resource: { resource: call.resource, accountId: ACCOUNT },
      contextVariables: Object.fromEntries(Object.entries(call.context).map(([key, value]) => [aliasKey(key), value])),
    },
    identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: withAliasedConditions(p.policy) })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(resourcePolicy ? { resourcePolicy: withAliasedConditions(resourcePolicy) } : {}),
  };
  const response = await runSimulation(simulation, {});
  if (response.resultType === 'error') return { call, result: 'Error', errors: JSON.stringify(response.errors) };
  if (response.resultType !== 'single') return { call, result: `Unexpected ${response.resultType}` };
  const ignored = response.result.ignoredContextKeys ?? [];
  if (ignored.length) return { call, result: 'Error', errors: `condition keys ${ignored.join(', ')} are not ${call.action}'s` };
  return { call, result: response.overallResult };
}

/** The actions a function's role grants (X-Ray and log writing excepted: Lambda's runtime uses those, not the code). */
export function grantedActions(fn: DeployedFunction): string[] {
  const actions = new Set<string>();
  for (const { policy } of fn.policies)
    for (const statement of policy.Statement) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of [statement.Action].flat() as string[]) if (!/^(xray|logs):/.test(action)) actions.add(action);
    }
  return [...actions].sort();
}
