/**
 * The deployed settings the cost model needs, read from the CDK constructs themselves (so there is
 * one source): each pipeline function's memory and architecture, as `cdk synth` would give them
 * (the delivery pipeline built on a bare stack, bundling skipped).
 */
import { App, Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { DeliveryPipeline } from '../lib/constructs/delivery-pipeline';
import type { ServiceFunction } from '../lib/constructs/service-function';
import { ServiceTable } from '../lib/constructs/table';

/** A function's billed settings. */
export interface FunctionSettings {
  readonly memoryMb: number;
  readonly architecture: 'arm64' | 'x86_64';
}

/**
 * The pipeline functions by the names the local stack and the benchmark give them (`publisher`,
 * `dispatcher`, `slow-dispatcher`, `dead-letter`).
 */
export function pipelineFunctionSettings(dispatcherBatchSize: number): Record<string, FunctionSettings> {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'BenchSettings');
  const pipeline = new DeliveryPipeline(stack, 'Delivery', { table: new ServiceTable(stack, 'Data'), dispatcherBatchSize });
  const settings = (fn: ServiceFunction): FunctionSettings => {
    const cfn = fn.function.node.defaultChild as CfnFunction;
    const memoryMb = Stack.of(fn).resolve(cfn.memorySize) as number | undefined;
    const architecture = fn.function.architecture.name;
    if (architecture !== 'arm64' && architecture !== 'x86_64') throw new Error(`${fn.node.path}: unknown architecture ${architecture}`);
    // CloudFormation's default when a function leaves MemorySize out.
    return { memoryMb: memoryMb ?? 128, architecture };
  };
  return {
    publisher: settings(pipeline.publisher),
    dispatcher: settings(pipeline.dispatcher),
    'slow-dispatcher': settings(pipeline.slowDispatcher),
    'dead-letter': settings(pipeline.deadLetterConsumer),
  };
}
