/**
 * Opening a portal link (docs/behaviour.md#the-embedded-console): the platform's page frames
 * `<console>/#portal=<code>`; the console takes the code out of the address at once and trades
 * it, once, for a portal session token (`whs_…`) at the public exchange route. The answer's
 * shape is the exchange's wire, `{token, sessionId, workspace, expiresAt, readOnly, eventTypes,
 * returnUrl, branding}`; this file is the console's one view of it.
 */
import { apiBase, sendJson, toProblem } from './client';
import { ROUTES, type ResponseOf } from './contract';

/** The fragment parameter that carries a portal link's code. */
const CODE_PARAM = 'portal';

/**
 * What the exchange answers: the session token (`whs_…`, sent as a Bearer header like an API
 * token), the workspace, when the session ends, its `readOnly` and `eventTypes` limits (null:
 * every type), its `returnUrl` (null: none) and the workspace's branding.
 */
export type PortalExchange = ResponseOf<'exchangePortalSession'>;

/**
 * The portal code of the current address (`#portal=<code>`), removed from the address bar and
 * the history entry at once, so a reload, a copied URL or the Back button never carries it.
 * Null when the address has none.
 */
export function takePortalCode(): string | null {
  const fragment = location.hash.replace(/^#/, '');
  if (!fragment.startsWith(`${CODE_PARAM}=`)) return null;
  const code = new URLSearchParams(fragment).get(CODE_PARAM);
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  return code || null;
}

/**
 * Trades a portal code for its session. Rejects with the API's {@link ApiProblem}: a used,
 * expired or unknown code is a 4xx other than 429; a network failure is status 0.
 */
export async function exchangePortalCode(code: string): Promise<PortalExchange> {
  const { response, json } = await sendJson(`${apiBase()}${ROUTES.exchangePortalSession.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, application/problem+json' },
    body: JSON.stringify({ code }),
  });
  if (!response.ok) throw toProblem(response, json);
  return json as PortalExchange;
}
