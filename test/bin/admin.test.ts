/** The admin CLI, run as a user runs it, against a table on DynamoDB Local. */
import { execFile } from 'node:child_process';
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
  expect(caller).toMatchObject({ workspace: 'acme', scopes: ['read', 'webhook:write'] });
  expect((await listMembers(table, 'acme', 10)).items).toEqual([expect.objectContaining({ email: 'ops@acme.test', role: 'admin' })]);
  await expect(admin('token', 'create', 'nope')).rejects.toMatchObject({ stderr: expect.stringContaining('No workspace nope') });
  await expect(admin('token', 'create', 'acme', '--scopes', 'root')).rejects.toMatchObject({
    stderr: expect.stringContaining('Unknown scope'),
  });
});
