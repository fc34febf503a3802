/** The real local stack on the run's DynamoDB Local, and a small client for it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../bin/local/stack';

/** A response as tests look at it. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A running local API plus helpers. */
export interface TestApi extends LocalStack {
  call<T = any>(method: string, path: string, options?: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** Starts the local stack on a fresh table (stop it with `close`). */
export async function startTestApi(options: Partial<LocalStackOptions> = {}): Promise<TestApi> {
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-test-'));
  const stack = await startLocalStack({
    port: 0,
    dataDir,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    tableName: `t-${randomUUID()}`,
    writeStackFile: false,
    ...options,
  });
  return {
    ...stack,
    async call(method, path, opts = {}) {
      const token = opts.token === undefined ? stack.token : opts.token;
      const res = await fetch(`${stack.apiUrl}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(opts.body !== undefined || opts.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
          ...opts.headers,
        },
        ...(opts.rawBody !== undefined ? { body: opts.rawBody } : opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
      const text = await res.text();
      let body: unknown = undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      return { status: res.status, headers: res.headers, body: body as never, text };
    },
    async close() {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
