/**
 * Notifications as the overview and the notifications page show them. The kinds written today
 * (docs/behaviour.md#notifications): `delivery.dead_lettered` (the dead-letter consumer) and
 * `endpoint.disabled` (the failure streak); an unknown kind is shown by its name.
 */
import type { Notification } from '../api/contract';
import { href } from '../router';

/** The kinds that ask someone to act: replay a dead letter, fix and re-enable an endpoint. */
export const ACTION_KINDS: ReadonlySet<string> = new Set(['delivery.dead_lettered', 'endpoint.disabled']);

const KIND_TEXT: Record<string, { text: string; badge: string }> = {
  'delivery.dead_lettered': { text: 'Delivery dead-lettered', badge: 'badge-dead_lettered' },
  'endpoint.disabled': { text: 'Endpoint disabled', badge: 'badge-off' },
};

/** A notification's kind in words (and colour), its wire name alongside for unknown kinds. */
export function NotificationKind({ kind }: { kind: string }) {
  const known = KIND_TEXT[kind];
  if (!known) return <span class="badge badge-neutral mono">{kind}</span>;
  return (
    <span class={`badge ${known.badge}`} title={kind}>
      {known.text}
    </span>
  );
}

/** Links to where the notification can be acted on: its delivery (replay) and its endpoint (re-enable). */
export function NotificationLinks({ notification }: { notification: Notification }) {
  const { deliveryId, endpointId } = notification;
  if (!deliveryId && !endpointId) return <span class="muted">—</span>;
  return (
    <ul class="ws-links">
      {deliveryId ? (
        <li>
          <span class="muted">Delivery </span>
          <a class="mono" href={href(`deliveries/${deliveryId}`)}>
            {deliveryId}
          </a>
        </li>
      ) : null}
      {endpointId ? (
        <li>
          <span class="muted">Endpoint </span>
          <a class="mono" href={href(`endpoints/${endpointId}`)}>
            {endpointId}
          </a>
        </li>
      ) : null}
    </ul>
  );
}
