/** Lambda entry serving `/openapi.json` and `/reference` from its bundled docs folder. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ENV } from '../contract/deployment';
import { AppError } from '../contract/errors';
import { docsResponse, serverUrlOf } from '../http/docs';
import { problemResponse } from '../http/responses';

const dir = process.env[ENV.DOCS_DIR] ?? join(process.env.LAMBDA_TASK_ROOT ?? '.', 'docs');
const cache = new Map<string, Buffer | undefined>();

function read(name: string): Buffer | undefined {
  if (!cache.has(name)) {
    const path = join(dir, name);
    cache.set(name, existsSync(path) ? readFileSync(path) : undefined);
  }
  return cache.get(name);
}

/** Answers a docs path, or a RouteNotFound problem. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  return (
    docsResponse(event.path, read, serverUrlOf(event)) ??
    problemResponse(new AppError('RouteNotFound', `No document at ${event.path}`), event.requestContext?.requestId ?? 'unknown')
  );
}
