/**
 * `npm run smoke`, run as an operator runs it (a child process) against the
 * local stack: it passes end to end with its own receiver, and a failure
 * names its step, exits non-zero and still deletes the throwaway endpoint.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { usePipelineApi } from '../helpers/local-api';

const run = promisify(execFile);
const ctx = usePipelineApi();

/** Runs the smoke CLI; resolves with its exit code and output whatever the code. */
async function smoke(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/smoke.ts', ...args], {
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const stackArgs = () => ['--api', ctx.api.apiUrl, '--token', ctx.api.token, '--workspace', ctx.api.workspace];

/** The workspace's endpoints: the smoke test leaves none behind. */
async function endpoints(): Promise<unknown[]> {
  const res = await ctx.api.call<{ items: unknown[] }>('GET', `/workspaces/${ctx.api.workspace}/webhooks`);
  expect(res.status).toBe(200);
  return res.body.items;
}

describe('npm run smoke against the local stack', () => {
  it('passes every step with its own receiver, verifying the signature, and deletes its endpoint', async () => {
    const { code, stdout } = await smoke(...stackArgs());
    expect(stdout).toContain('Smoke test passed.');
    expect(code).toBe(0);
    for (const step of [
      'create endpoint',
      'get signing secret',
      'start receiver',
      'send test event',
      'wait for delivered',
      'check evidence',
      'verify signature',
      'delete endpoint',
    ]) {
      expect(stdout).toMatch(new RegExp(`^  ok    ${step}: `, 'm'));
    }
    expect(stdout).toMatch(/check evidence: attempt 1 delivered, HTTP 200/);
    expect(stdout).not.toContain('FAIL');
    expect(await endpoints()).toEqual([]);
  });

  it('fails at "wait for delivered" when the receiver answers 500, exits 1 and still deletes the endpoint', async () => {
    const receiver = await ctx.receiver((_req, res) => {
      res.writeHead(500);
      res.end('down');
    });
    const { code, stdout } = await smoke(...stackArgs(), '--receiver', receiver.url, '--timeout', '1');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}FAIL {2}wait for delivered: .*last response 500/m);
    expect(stdout).toMatch(/^ {2}ok {4}delete endpoint: /m);
    expect(stdout).toContain('Smoke test FAILED at step "wait for delivered".');
    expect(receiver.seen.length).toBeGreaterThan(0);
    expect(await endpoints()).toEqual([]);
  });

  it('fails at "create endpoint" with a token the API refuses, naming the problem', async () => {
    const { code, stdout } = await smoke('--api', ctx.api.apiUrl, '--token', 'whk_not-a-token', '--workspace', ctx.api.workspace);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}FAIL {2}create endpoint: POST \/workspaces\/\S+\/webhooks answered 401 Unauthorized/m);
    expect(stdout).toContain('Smoke test FAILED at step "create endpoint".');
  });

  it('refuses to run its own receiver for an API that is not on this machine (exit 2)', async () => {
    const { code, stderr } = await smoke('--api', 'https://api.example.com', '--token', 'whk_x', '--workspace', 'acme');
    expect(code).toBe(2);
    expect(stderr).toContain('--receiver is required');
  });
});
