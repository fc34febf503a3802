/**
 * Workspace administration outside the API: creating workspaces, adding
 * members and issuing tokens as the system (the admin CLI, on a deployed or
 * local table, and the local stack's seed). Tokens are audited like any other.
 */
import { hashApiToken, mintApiToken } from '../domain/api-tokens';
import { newId } from '../domain/ids';
import { putApiToken } from '../store/api-tokens';
import type { TableContext } from '../store/client';
import { addMember, createWorkspace, getWorkspace } from '../store/workspaces';
import type { Member } from '../contract/schemas';

/** Creates a workspace unless it exists; true when created. */
export async function ensureWorkspace(table: TableContext, slug: string, name: string, now = new Date()): Promise<boolean> {
  if (await getWorkspace(table, slug)) return false;
  return createWorkspace(table, { slug, name }, now);
}

/** Mints a token for a workspace; returns the raw token (shown once) and its id. */
export async function issueToken(
  table: TableContext,
  slug: string,
  input: { name: string; scopes: string[] },
  now = new Date(),
): Promise<{ token: string; tokenId: string }> {
  const token = mintApiToken();
  const tokenId = newId('tok', now);
  await putApiToken(
    table,
    slug,
    {
      tokenId,
      name: input.name,
      scopes: input.scopes as never,
      createdAt: now.toISOString(),
      createdBy: { kind: 'system', id: 'system' },
      hash: hashApiToken(token),
    },
    now,
    {
      action: 'api_token.created',
      actor: 'system',
      targetId: tokenId,
      detail: { name: input.name, scopes: input.scopes },
    },
  );
  return { token, tokenId };
}

/** Adds a member. */
export function seedMember(table: TableContext, slug: string, email: string, role: Member['role'], now = new Date()): Promise<Member> {
  return addMember(table, slug, { email, role }, now);
}
