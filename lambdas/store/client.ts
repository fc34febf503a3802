/** The DynamoDB document client and the table it is bound to. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENV } from '../contract/deployment';

/** A table binding: the client and the table name. */
export interface TableContext {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Options of {@link createTableContext}. */
export interface TableOptions {
  readonly tableName: string;
  /** Endpoint override (DynamoDB Local). */
  readonly endpoint?: string;
  readonly region?: string;
}

/** Builds a table binding; with an endpoint override, dummy credentials are used (DynamoDB Local ignores them). */
export function createTableContext(options: TableOptions): TableContext {
  const client = new DynamoDBClient({
    ...(options.endpoint
      ? { endpoint: options.endpoint, region: options.region ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : options.region
        ? { region: options.region }
        : {}),
  });
  return {
    doc: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
    tableName: options.tableName,
  };
}

/** The table binding a Lambda runs with: `TABLE_NAME` and, locally, `DYNAMODB_ENDPOINT`. */
export function tableFromEnv(env: NodeJS.ProcessEnv = process.env): TableContext {
  const tableName = env[ENV.TABLE_NAME];
  if (!tableName) throw new Error(`${ENV.TABLE_NAME} is not set`);
  const endpoint = env[ENV.DYNAMODB_ENDPOINT];
  return createTableContext({ tableName, ...(endpoint ? { endpoint } : {}) });
}
