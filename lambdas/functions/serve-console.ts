/** Lambda entry serving the web console (`/console`) from its bundled console folder. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ENV } from '../contract/deployment';
import { AppError } from '../contract/errors';
import { frameAncestorsFrom } from '../contract/frame-ancestors';
import { providerDiscovery, type ProviderDiscovery } from '../identity/oidc-discovery';
import { consoleResponse, isConsolePage, staffSignInMeta } from '../http/console';
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

/** One discovery per issuer for the container's life: a page load costs no request to the provider most of the time. */
const discoveries = new Map<string, ProviderDiscovery>();
function discoveryOf(issuer: string): ProviderDiscovery {
  let discovery = discoveries.get(issuer);
  if (!discovery) discoveries.set(issuer, (discovery = providerDiscovery(issuer)));
  return discovery;
}

/**
 * One JSON log line at level ERROR. Not the shared logger: that module builds the AWS clients, which
 * would take this function's bundle from a few KiB to a quarter of a MiB.
 */
function logError(message: string, error: unknown): void {
  const detail = error instanceof Error ? { name: error.name, message: error.message } : error;
  console.error(JSON.stringify({ level: 'ERROR', message, error: detail, timestamp: new Date().toISOString() }));
}

/**
 * Answers a console path, or a RouteNotFound problem. The framing origins and the staff sign-in
 * setting are read per call, as the folder is; the page names the identity provider when the
 * stage has one and its discovery answers (docs/behaviour.md#staff-sign-in).
 */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const staffSignIn = isConsolePage(event.path)
    ? await staffSignInMeta(process.env[ENV.CONSOLE_OIDC], process.env[ENV.CONSOLE_URL], discoveryOf, logError)
    : null;
  return (
    consoleResponse(event.path, read, frameAncestorsFrom(process.env[ENV.CONSOLE_FRAME_ANCESTORS]), staffSignIn) ??
    problemResponse(new AppError('RouteNotFound', `No console file at ${event.path}`), event.requestContext?.requestId ?? 'unknown')
  );
}
