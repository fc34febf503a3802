/**
 * The portal link `npm start` prints (docs/behaviour.md#portal-sessions): a writing session on the
 * seeded workspace for a day, minted through the API with the seeded admin token, as a platform's
 * backend would mint one.
 */
import type { LocalStack } from './stack';

/** A day: how long the printed session lasts. */
const DEMO_SESSION_SECONDS = 86_400;

/** Mints a portal session on the stack's workspace and answers its link (open it once, within ten minutes). */
export async function demoPortalLink(stack: Pick<LocalStack, 'apiUrl' | 'workspace' | 'token'>): Promise<string> {
  const res = await fetch(`${stack.apiUrl}/workspaces/${stack.workspace}/portal-sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expiresIn: DEMO_SESSION_SECONDS }),
  });
  const body = (await res.json()) as { url?: string; detail?: string };
  if (res.status !== 201 || !body.url) throw new Error(`could not mint a portal link: ${res.status} ${body.detail ?? ''}`);
  return body.url;
}
