/** Lambda entry serving the web console (`/console`) from its bundled console folder. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ENV } from '../contract/deployment';
import { AppError } from '../contract/errors';
import { frameAncestorsFrom } from '../contract/frame-ancestors';
import { consoleResponse } from '../http/console';
import { problemResponse } from '../http/responses';

const cache = new Map<string, Buffer | undefined>();

/** The bundle's folder, read per call: the local stack may start again in one process with another folder. */
function consoleDir(): string {
  return process.env[ENV.CONSOLE_DIR] ?? join(process.env.LAMBDA_TASK_ROOT ?? '.', 'console');
}

function read(name: string): Buffer | undefined {
  const path = join(consoleDir(), name);
  if (!cache.has(path)) cache.set(path, existsSync(path) ? readFileSync(path) : undefined);
  return cache.get(path);
}

/** Answers a console path, or a RouteNotFound problem. The framing origins are read per call, as the folder is. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  return (
    consoleResponse(event.path, read, frameAncestorsFrom(process.env[ENV.CONSOLE_FRAME_ANCESTORS])) ??
    problemResponse(new AppError('RouteNotFound', `No console file at ${event.path}`), event.requestContext?.requestId ?? 'unknown')
  );
}
