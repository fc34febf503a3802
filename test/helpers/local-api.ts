/** The real local stack on the run's DynamoDB Local, and a small client for it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../bin/local/stack';
import { scriptedReceiver } from './scripted-receiver';

/** A response as tests look at it. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A running local API plus helpers. */
export interface TestApi extends LocalStack {
  call<T = any>(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
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

/** What {@link usePipelineApi} gives a test file. */
export interface PipelineApi {
  /** The stack (set once the file's `beforeAll` ran). */
  readonly api: TestApi;
  /** Cleanups run after each test (receivers register theirs here). */
  readonly stops: (() => Promise<void>)[];
  /** A loopback receiver that stops after the test. */
  readonly receiver: (respond: Parameters<typeof scriptedReceiver>[0]) => ReturnType<typeof scriptedReceiver>;
}

/**
 * The local stack a pipeline test file runs against, fast: 30 s backoff steps
 * become 30 ms (time scale 1000), no schedules, pipeline errors ignored (the
 * tests look at outcomes). Registers the file's hooks: started before all
 * tests, receivers stopped after each, the stack closed after all.
 */
export function usePipelineApi(options: Partial<LocalStackOptions> = {}): PipelineApi {
  let api: TestApi | undefined;
  const stops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    api = await startTestApi({ timeScale: 1000, schedules: false, onPipelineError: () => undefined, ...options });
  });
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((s) => s()));
  });
  afterAll(async () => {
    await api?.close();
  });
  return {
    get api() {
      if (!api) throw new Error('the pipeline stack is not started yet (use it inside a test or hook)');
      return api;
    },
    stops,
    receiver: async (respond) => {
      const r = await scriptedReceiver(respond);
      stops.push(() => r.stop());
      return r;
    },
  };
}
