/**
 * The contract-derived bindings shared by the REST functions and the MCP
 * function: a resource an operation uses but the construct was not given fails
 * synth with a message naming both.
 */
import { SecretsKey } from '../../../lib/constructs/secrets-key';
import { App, Stack } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Outbox } from '../../../lib/constructs/outbox';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationDef } from '../../../lambdas/contract/operations';
import { McpEndpoint } from '../../../lib/constructs/mcp-endpoint';
import { bindOperationResources, resourcesUsedBy } from '../../../lib/constructs/operation-resources';
import { ServiceApi } from '../../../lib/constructs/rest-api';
import { ServiceTable } from '../../../lib/constructs/table';

/** A stack whose functions are not bundled (the template is all these tests need). */
function stack(): Stack {
  return new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
}

describe('operation resources', () => {
  it('are the union of what the operations use', () => {
    const ops = OPERATIONS as readonly OperationDef[];
    expect(resourcesUsedBy([])).toEqual(new Set());
    expect(resourcesUsedBy(ops)).toEqual(new Set(ops.flatMap((d) => d.uses ?? [])));
  });

  it('bind nothing when nothing is used, whatever was given', () => {
    const s = stack();
    const binding = bindOperationResources(
      [],
      {
        deliveryQueue: new Queue(s, 'Q'),
        outbox: new Outbox(s, 'OutboxB', { eventBus: new EventBus(s, 'B'), stage: 'test' }),
        jobQueue: new Queue(s, 'J'),
      },
      'listWebhooks',
      'ServiceApi',
    );
    expect(binding.environment).toEqual({});
  });

  it('fail synth when the MCP endpoint lacks a resource some tool uses', () => {
    const s = stack();
    const table = new ServiceTable(s, 'Data');
    expect(() => new McpEndpoint(s, 'Mcp', { table, deliveryQueue: new Queue(s, 'Q') })).toThrow(
      'An MCP tool uses domain events: give McpEndpoint an outbox',
    );
    expect(
      () => new McpEndpoint(s, 'Mcp2', { table, outbox: new Outbox(s, 'OutboxB', { eventBus: new EventBus(s, 'B'), stage: 'test' }) }),
    ).toThrow('An MCP tool uses the delivery queue: give McpEndpoint a deliveryQueue');
    expect(
      () =>
        new McpEndpoint(s, 'Mcp3', {
          table,
          deliveryQueue: new Queue(s, 'Q3'),
          outbox: new Outbox(s, 'OutboxB3', { eventBus: new EventBus(s, 'B3'), stage: 'test' }),
        }),
    ).toThrow('An MCP tool uses the jobs queue: give McpEndpoint a jobQueue');
  });

  it('fail synth when the REST API lacks a resource an operation uses', () => {
    const s = stack();
    expect(
      () =>
        new ServiceApi(s, 'Api', {
          table: new ServiceTable(s, 'Data'),
          jobQueue: new Queue(s, 'J1'),
          outbox: new Outbox(s, 'OutboxB', { eventBus: new EventBus(s, 'B'), stage: 'test' }),
          secretsKey: new SecretsKey(s, 'K'),
        }),
    ).toThrow(/^\w+ uses the delivery queue: give ServiceApi a deliveryQueue$/);
    expect(
      () =>
        new ServiceApi(s, 'Api2', {
          table: new ServiceTable(s, 'Data2'),
          deliveryQueue: new Queue(s, 'Q2'),
          outbox: new Outbox(s, 'OutboxB2', { eventBus: new EventBus(s, 'B2'), stage: 'test' }),
          secretsKey: new SecretsKey(s, 'K2'),
        }),
    ).toThrow(/^(deleteWebhook|recoverWebhookDeliveries) uses the jobs queue: give ServiceApi a jobQueue$/);
    expect(
      () =>
        new ServiceApi(s, 'Api3', {
          table: new ServiceTable(s, 'Data3'),
          deliveryQueue: new Queue(s, 'Q3'),
          outbox: new Outbox(s, 'OutboxB3', { eventBus: new EventBus(s, 'B3'), stage: 'test' }),
          jobQueue: new Queue(s, 'J3'),
        }),
    ).toThrow('createWebhook uses secret sealing: give ServiceApi a secretsKey');
  });
});
