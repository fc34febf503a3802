/**
 * Records, per Lambda invocation, the AWS call each adapter of the local stack stands for: the IAM
 * action, the resource ARN the deployed stack would give it, and the request's condition keys, so a
 * test can evaluate every call against the function's synthesized role (docs/architecture.md#the-iam-check).
 * The invocation is the handler's `AsyncLocalStorage` scope (every function shares one process);
 * nothing is recorded unless a recorder is installed (the local stack's `recordAwsCalls` option).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KMS_ENCRYPTION_CONTEXT } from '#lambdas/contract/deployment';
import type { AdapterFactories } from '#lambdas/composition/runtime';

/** One AWS request a function would make on AWS. */
export interface AwsCall {
  /** The Lambda entry (`lambdas/functions/<function>.ts`) whose invocation made it. */
  readonly function: string;
  /** The IAM action, e.g. `dynamodb:Query`. */
  readonly action: string;
  /** The resource ARN, as the deployed stack names it. */
  readonly resource: string;
  /** The request's condition keys (`aws:SecureTransport`, `kms:EncryptionContext:<k>`, `dynamodb:LeadingKeys`). */
  readonly context: Readonly<Record<string, string | string[]>>;
}

/** Where the local resources are on AWS: their ARNs and key schema, read from the synthesized template. */
export interface DeployedResources {
  /** The table `name` (or its index `index`): its ARN and partition key attribute. */
  table(name: string, index?: string): { readonly arn: string; readonly partitionKey: string };
  /** The queue at the local `url` (`local:…`). */
  queue(url: string): string;
  /** The event bus named `name` locally. */
  bus(name: string): string;
  /** The stream of the table `name` (the outbox table's, which the relay's event source mapping reads). */
  stream(name: string): string;
  /** The on-failure destination queue of the event source mapping of the function `fn`. */
  onFailureQueue(fn: string): string;
  /** The secrets key. */
  key(): string;
}

const invocation = new AsyncLocalStorage<string>();
/** The recorders installed: each learns which functions ran, calls or not. */
const recorders = new Set<AwsCallRecorder>();

/** Runs `run` as an invocation of the Lambda entry `fn`: the calls it makes are that function's. */
export function asInvocation<T>(fn: string, run: () => T): T {
  for (const recorder of recorders) recorder.invoked.add(fn);
  return invocation.run(fn, run);
}

/** Every request is over TLS: the SDK's endpoints are HTTPS. */
const TRANSPORT = { 'aws:SecureTransport': 'true' } as const;

/** A DynamoDB attribute value (marshalled `{S: …}` or plain) as a string, when it is one. */
function keyString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
}

/** The partition key value a Query's key condition names (`#pk = :pk` or `pk = :pk`). */
function queriedKey(input: Record<string, unknown>, partitionKey: string): string | undefined {
  const expression = typeof input.KeyConditionExpression === 'string' ? input.KeyConditionExpression : '';
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const [, name, ref] of expression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    if ((names[name!] ?? name) === partitionKey) return keyString(values[ref!]);
  }
  return undefined;
}

/** Records the AWS calls of the local stack's functions. */
export class AwsCallRecorder {
  /** Every call recorded, in order. */
  readonly calls: AwsCall[] = [];
  /** Calls made outside any invocation (by the stack itself, not a function). */
  unattributed = 0;
  /** The Lambda entries invoked since the recorder was made. */
  readonly invoked = new Set<string>();

  constructor(private readonly resources: DeployedResources) {
    recorders.add(this);
  }

  /** Stops learning of invocations (the calls it records are those of a stack it was given to). */
  close(): void {
    recorders.delete(this);
  }

  /** Records a call of the current invocation (or of `fn`, for what Lambda does on a function's behalf). */
  record(action: string, resource: string, context: Record<string, string | string[]> = {}, fn = invocation.getStore()): void {
    if (!fn) {
      this.unattributed++;
      return;
    }
    this.calls.push({ function: fn, action, resource, context: { ...TRANSPORT, ...context } });
  }

  /** Records a call on the resource `resource()` names; see {@link guarded}. */
  private recordOn(
    action: string,
    resource: () => string,
    context: Record<string, string | string[]> = {},
    fn = invocation.getStore(),
  ): void {
    let arn: string;
    try {
      arn = resource();
    } catch (error) {
      arn = `unresolved: ${(error as Error).message}`;
    }
    this.record(action, arn, context, fn);
  }

  /** Runs `record`; a call it cannot map is recorded as such (never thrown: the recorder changes no behaviour). */
  private guarded(action: string, record: () => void): void {
    try {
      record();
    } catch (error) {
      this.record(action, `unresolved: ${(error as Error).message}`);
    }
  }

  /** Records each DynamoDB request of `doc` as the actions IAM checks for it, on the table or index it names. */
  watchTable(doc: DynamoDBDocumentClient): void {
    doc.middlewareStack.add(
      (next, context) => async (args) => {
        this.guarded(`dynamodb:${context.commandName ?? ''}`, () =>
          this.recordDynamoDb(context.commandName ?? '', args.input as Record<string, unknown>),
        );
        return next(args);
      },
      { step: 'initialize', name: 'awsCallRecorder', priority: 'high' },
    );
  }

  private recordDynamoDb(commandName: string, input: Record<string, unknown>): void {
    const operation = commandName.replace(/Command$/, '');
    const onItem = (action: string, table: string, key: Record<string, unknown> | undefined, index?: string) => {
      const { arn, partitionKey } = this.resources.table(table, index);
      const leading = keyString(key?.[partitionKey]);
      this.record(`dynamodb:${action}`, arn, leading ? { 'dynamodb:LeadingKeys': [leading] } : {});
    };
    switch (operation) {
      case 'Query': {
        const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
        const { arn, partitionKey } = this.resources.table(String(input.TableName), index);
        const leading = queriedKey(input, partitionKey);
        this.record('dynamodb:Query', arn, leading ? { 'dynamodb:LeadingKeys': [leading] } : {});
        return;
      }
      case 'Scan':
        this.record('dynamodb:Scan', this.resources.table(String(input.TableName), input.IndexName as string | undefined).arn);
        return;
      case 'GetItem':
      case 'UpdateItem':
      case 'DeleteItem':
        onItem(operation, String(input.TableName), input.Key as Record<string, unknown>);
        return;
      case 'PutItem':
        onItem(operation, String(input.TableName), input.Item as Record<string, unknown>);
        return;
      case 'BatchGetItem':
      case 'BatchWriteItem': {
        // One action per table; the leading keys are every item's.
        for (const [table, request] of Object.entries((input.RequestItems ?? {}) as Record<string, unknown>)) {
          const { arn, partitionKey } = this.resources.table(table);
          const keys =
            operation === 'BatchGetItem'
              ? ((request as { Keys?: Record<string, unknown>[] }).Keys ?? [])
              : (request as { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }[]).map(
                  (r) => r.PutRequest?.Item ?? r.DeleteRequest?.Key ?? {},
                );
          const leading = [...new Set(keys.map((k) => keyString(k[partitionKey])).filter((k): k is string => k !== undefined))];
          this.record(`dynamodb:${operation}`, arn, leading.length ? { 'dynamodb:LeadingKeys': leading } : {});
        }
        return;
      }
      case 'TransactWriteItems':
      case 'TransactGetItems': {
        // IAM checks a transaction item by item, as the single-item action.
        const actions: Record<string, string> = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
          Get: 'GetItem',
        };
        for (const item of (input.TransactItems ?? []) as Record<
          string,
          { TableName: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> }
        >[]) {
          for (const [kind, request] of Object.entries(item)) onItem(actions[kind] ?? kind, request.TableName, request.Key ?? request.Item);
        }
        return;
      }
      default:
        this.record(`dynamodb:${operation}`, this.resources.table(String(input.TableName)).arn);
    }
  }

  /** The adapter factories of `own`, recording the SQS, EventBridge and KMS requests they stand for. */
  adapters(own: AdapterFactories): AdapterFactories {
    const r = this.resources;
    const kmsContext = Object.fromEntries(Object.entries(KMS_ENCRYPTION_CONTEXT).map(([k, v]) => [`kms:EncryptionContext:${k}`, v]));
    const kmsKeys = { ...kmsContext, 'kms:EncryptionContextKeys': Object.keys(KMS_ENCRYPTION_CONTEXT) };
    return {
      ...own,
      deliveryQueue: (url) => {
        const queue = own.deliveryQueue(url);
        return {
          send: async (messages) => {
            this.recordOn('sqs:SendMessage', () => r.queue(url));
            return queue.send(messages);
          },
        };
      },
      messageDelayer: (url) => {
        const delayer = own.messageDelayer(url);
        return {
          delay: async (receiptHandle, seconds) => {
            this.recordOn('sqs:ChangeMessageVisibility', () => r.queue(url));
            return delayer.delay(receiptHandle, seconds);
          },
        };
      },
      jobQueue: (url) => {
        const queue = own.jobQueue(url);
        return {
          send: async (message, delaySeconds) => {
            this.recordOn('sqs:SendMessage', () => r.queue(url));
            return queue.send(message, delaySeconds);
          },
        };
      },
      domainEvents: (name) => {
        const bus = own.domainEvents(name);
        return {
          put: async (events) => {
            this.recordOn('events:PutEvents', () => r.bus(name));
            return bus.put(events);
          },
        };
      },
      ...(own.secretSealer
        ? {
            secretSealer: (keyId) => {
              const inner = own.secretSealer!(keyId);
              // Each seal and open stands for a KMS request (the deployed sealer caches its data keys, so makes at most these).
              return {
                seal: async (plaintext) => {
                  this.recordOn('kms:GenerateDataKey', () => r.key(), kmsKeys);
                  return inner.seal(plaintext);
                },
                open: async (sealed) => {
                  this.recordOn('kms:Decrypt', () => r.key(), kmsKeys);
                  return inner.open(sealed);
                },
              };
            },
          }
        : {}),
    };
  }

  /**
   * What Lambda's event source mapping does with the role of `fn` for each batch of the stream of
   * the table `table` (the outbox relay's): describes the stream, takes a shard iterator, reads
   * records, and lists the streams.
   */
  recordStreamPolling(fn: string, table: string): void {
    for (const action of ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords'])
      this.recordOn(action, () => this.resources.stream(table), {}, fn);
    this.record('dynamodb:ListStreams', '*', {}, fn);
  }

  /** What Lambda's event source mapping of `fn` does when it gives up a batch: sends its record to the on-failure queue. */
  recordOnFailure(fn: string): void {
    this.recordOn('sqs:SendMessage', () => this.resources.onFailureQueue(fn), {}, fn);
  }

  /**
   * What Lambda's event source mapping does with the role of `fn` for each batch of the queue at
   * `url`: receives, deletes, and reads the queue's attributes.
   */
  recordPolling(fn: string, url: string): void {
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'])
      this.recordOn(action, () => this.resources.queue(url), {}, fn);
  }
}
