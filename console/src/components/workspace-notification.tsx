/**
 * Notifications as the overview and the notifications page show them. The kinds written today
 * (docs/behaviour.md#notifications): `delivery.dead_lettered` (the dead-letter consumer) and
 * `endpoint.disabled` (the failure streak); an unknown kind is shown by its name. A token with
 * `notification:ack` may acknowledge one, which takes it off the overview's "Needs action".
 */
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Notification } from '../api/contract';
import { href } from '../router';
import { useCan, useSession } from '../session';
import { asProblem } from './load';
import { ShortTime } from './delivery-parts';

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

/**
 * Links to where the notification can be acted on: its delivery (replay) and its endpoint
 * (re-enable), the endpoint by its label (description, else host) when it still exists.
 */
export function NotificationLinks({ notification, endpointLabel }: { notification: Notification; endpointLabel?: string }) {
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
          <a class={endpointLabel ? undefined : 'mono'} href={href(`endpoints/${endpointId}`)} title={endpointId}>
            {endpointLabel ?? endpointId}
          </a>
        </li>
      ) : null}
    </ul>
  );
}

/**
 * "Acknowledge" for a notification not acknowledged yet (with `notification:ack`), or when it
 * was acknowledged. `onAcknowledged` gets the notification as the API answered it.
 */
export function AckButton({ notification, onAcknowledged }: { notification: Notification; onAcknowledged: (n: Notification) => void }) {
  const { client } = useSession();
  const canAck = useCan('notification:ack');
  const [state, setState] = useState<{ busy: boolean; problem: ApiProblem | null }>({ busy: false, problem: null });
  const { acknowledgedAt } = notification;
  if (acknowledgedAt) {
    return (
      <span class="muted ws-acked">
        Acknowledged <ShortTime iso={acknowledgedAt} />
      </span>
    );
  }
  if (!canAck) return <span class="muted">Not acknowledged</span>;
  const ack = async () => {
    if (state.busy) return;
    setState({ busy: true, problem: null });
    try {
      const answered = await client.call('ackNotification', { params: { notificationId: notification.notificationId } });
      setState({ busy: false, problem: null });
      onAcknowledged(answered);
    } catch (e) {
      setState({ busy: false, problem: asProblem(e) });
    }
  };
  return (
    <span class="ws-ack">
      <button
        type="button"
        class="button button-small"
        onClick={() => void ack()}
        aria-disabled={state.busy ? 'true' : undefined}
        aria-describedby={state.problem ? `ack-${notification.notificationId}-problem` : undefined}
      >
        {state.busy ? 'Acknowledging…' : 'Acknowledge'}
      </button>
      {state.problem ? (
        <span id={`ack-${notification.notificationId}-problem`} class="field-error" role="alert">
          Not acknowledged: {state.problem.detail}
        </span>
      ) : null}
    </span>
  );
}
