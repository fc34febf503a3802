/** Lambda entry serving the web console (`/console`) from its bundled console folder. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { AppError } from '../contract/errors';
import { consoleResponse } from '../http/console';
import { problemResponse } from '../http/responses';

const dir = process.env.CONSOLE_DIR ?? join(process.env.LAMBDA_TASK_ROOT ?? '.', 'console');
const cache = new Map<string, Buffer | undefined>();

function read(name: string): Buffer | undefined {
  if (!cache.has(name)) {
    const path = join(dir, name);
    cache.set(name, existsSync(path) ? readFileSync(path) : undefined);
  }
  return cache.get(name);
}

/** Answers a console path, or a RouteNotFound problem. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  return (
    consoleResponse(event.path, read) ??
    problemResponse(new AppError('RouteNotFound', `No console file at ${event.path}`), event.requestContext?.requestId ?? 'unknown')
  );
}
