/** The admin CLI, run as a user runs it, against a table on DynamoDB Local. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { resolveCaller } from '../../lambdas/operations/access';
import { listMembers } from '../../lambdas/store/workspaces';
import { freshTable } from '../helpers/table';

const run = promisify(execFile);
let table: Awaited<ReturnType<typeof freshTable>>;

beforeAll(async () => {
  table = await freshTable();
});
afterAll(async () => {
  await table?.drop();
});

function admin(...args: string[]) {
  return run('npx', ['tsx', 'bin/admin.ts', ...args, '--endpoint', inject('dynamoDbEndpoint'), '--table', table.tableName], {
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
}

it('creates a workspace, a member and a token that the authorizer accepts', { timeout: 60_000 }, async () => {
  expect((await admin('workspace', 'create', 'acme', '--name', 'Acme')).stdout).toContain('Created workspace acme');
  await expect(admin('workspace', 'create', 'acme')).rejects.toMatchObject({ code: 1 });
  expect((await admin('member', 'add', 'acme', 'ops@acme.test', '--role', 'admin')).stdout).toContain('Added ops@acme.test');
  const { stdout } = await admin('token', 'create', 'acme', '--name', 'ci', '--scopes', 'read,webhook:write');
  const token = /^(whk_\S+)$/m.exec(stdout)?.[1];
  expect(token).toBeTruthy();
  const caller = await resolveCaller(table, `Bearer ${token}`);
  expect(caller).toMatchObject({ workspace: 'acme', scopes: ['read', 'webhook:write'], tokenName: 'ci' });
  expect((await listMembers(table, 'acme', 10)).items).toEqual([expect.objectContaining({ email: 'ops@acme.test', role: 'admin' })]);
  await expect(admin('token', 'create', 'nope')).rejects.toMatchObject({ stderr: expect.stringContaining('No workspace nope') });
  await expect(admin('token', 'create', 'acme', '--scopes', 'root')).rejects.toMatchObject({
    stderr: expect.stringContaining('Unknown scope'),
  });
});

it('counts what it queued in words that agree with the number: 1 delivery, 2 deliveries, 0 deliveries', { timeout: 60_000 }, async () => {
  // The local stack's event route, as the CLI reaches it through .local/stack.json: it answers the ids it queued.
  const answers = [['whd_1'], ['whd_1', 'whd_2'], []];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ deliveryIds: answers.shift() })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
  try {
    writeFileSync(join(dataDir, 'stack.json'), JSON.stringify({ apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
    const publish = async () =>
      (
        await run('npx', ['tsx', 'bin/admin.ts', 'publish', 'acme', 'order.shipped', '{"orderId":"42"}', '--data-dir', dataDir], {
          env: { ...process.env, NODE_NO_WARNINGS: '1' },
        })
      ).stdout.trim();
    expect(await publish()).toBe('Published order.shipped to acme: 1 delivery queued (whd_1).');
    expect(await publish()).toBe('Published order.shipped to acme: 2 deliveries queued (whd_1, whd_2).');
    expect(await publish()).toBe('Published order.shipped to acme: 0 deliveries queued.');
  } finally {
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  await expect(admin('token', 'create', 'acme', '--scopes', 'root,toor')).rejects.toMatchObject({
    stderr: expect.stringContaining('Unknown scopes: root, toor'),
  });
  await expect(admin('token', 'create', 'acme', '--scopes', ',')).rejects.toMatchObject({
    stderr: expect.stringContaining('No scope given'),
  });
});
