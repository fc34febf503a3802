/**
 * What the alarms and the dashboard watch, on a bare test stack: real queues, functions, a REST
 * API with its access log group, and a table, for monitoring.test.ts and dashboard.test.ts.
 */
import { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Stack } from 'aws-cdk-lib';
import type { MonitoredResources } from '../../../lib/constructs/monitoring';
import { functionEntry, ServiceFunction } from '../../../lib/constructs/service-function';

/** The resources, in `stack`, for the stage `stage`. */
export function monitoredResources(stack: Stack, stage = 'qa'): MonitoredResources {
  const fn = (id: string, entry: string) => new ServiceFunction(stack, id, { entry: functionEntry(entry) });
  const api = new RestApi(stack, 'Api', { restApiName: `webhooks-${stage}`, cloudWatchRole: false, deployOptions: { stageName: stage } });
  // A REST API needs a method to synthesize.
  api.root.addMethod('GET');
  return {
    stage,
    deliveryQueue: new Queue(stack, 'DeliveryQueue'),
    slowDeliveryQueue: new Queue(stack, 'SlowDeliveryQueue'),
    deadLetterQueue: new Queue(stack, 'DeadLetterQueue'),
    publishFailures: new Queue(stack, 'PublishFailures'),
    recoveryDeadLetterQueue: new Queue(stack, 'RecoveryDeadLetterQueue'),
    dispatcher: fn('Dispatcher', 'dispatcher'),
    slowDispatcher: fn('SlowDispatcher', 'slow-dispatcher'),
    publisher: fn('Publisher', 'publisher'),
    deadLetterConsumer: fn('DeadLetterConsumer', 'dead-letter'),
    authorizer: fn('Authorizer', 'authorizer'),
    mcp: fn('Mcp', 'mcp'),
    operations: [fn('ListWebhooks', 'list-webhooks'), fn('CreateWebhook', 'create-webhook')],
    scheduledJobs: [fn('Retention', 'retention'), fn('SecretExpiry', 'secret-expiry'), fn('PendingRepair', 'pending-repair')],
    recoveryWorker: fn('RecoveryWorker', 'recovery-worker'),
    api,
    accessLogs: new LogGroup(stack, 'AccessLogs'),
    table: new Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
    }),
  };
}
