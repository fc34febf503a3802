/** Starts DynamoDB Local once per test run; the returned teardown always stops it. */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dynamo = await startDynamoDbLocal();
  project.provide('dynamoDbEndpoint', dynamo.endpoint);
  return () => dynamo.stop();
}
