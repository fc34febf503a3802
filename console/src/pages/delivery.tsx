/**
 * `#/deliveries/:id`, the delivery page: a delivery's summary, its replays and its source, the
 * same event's deliveries to the workspace's other endpoints, the attempt evidence and the
 * payload, with "Replay" for a failed one and copy buttons for the ids support asks for. While
 * the delivery (or one of its replays) is still in progress the page refreshes by itself.
 */
import { useMemo, useRef, useState } from 'preact/hooks';
import { newIdempotencyKey, type ApiProblem } from '../api/client';
import type { Delivery, DeliveryDetail, DeliveryReplay } from '../api/contract';
import { DeliveryAttempts } from '../components/delivery-attempts';
import {
  DeliveryLink,
  EndpointLink,
  endpointLabels,
  FailureReason,
  NextAttempt,
  ShortTime,
  useEndpointDirectory,
} from '../components/delivery-parts';
import { inProgress, useLiveRefresh } from '../components/live-refresh';
import { asProblem, useLoad } from '../components/load';
import { CopyButton, Empty, Loading, PageHeader, ProblemView, StatusBadge, Time } from '../components/ui';
import { href } from '../router';
import { useCan, useSession } from '../session';
import '../styles/deliveries.css';

/** Statuses a replay accepts (docs/behaviour.md#replay); others answer 409 DeliveryNotReplayable. */
const REPLAYABLE: ReadonlySet<Delivery['status']> = new Set(['failed', 'failed_permanent', 'dead_lettered']);

type ReplayState =
  | { readonly state: 'idle' }
  | { readonly state: 'sending' }
  | { readonly state: 'done'; readonly delivery: Delivery }
  | { readonly state: 'error'; readonly problem: ApiProblem };

/** One delivery. */
export function DeliveryPage({ deliveryId }: { deliveryId: string }) {
  const { client } = useSession();
  const delivery = useLoad(() => client.call('getWebhookDelivery', { params: { deliveryId } }), [client, deliveryId]);
  // "Refresh" also reloads the attempts, even when the delivery itself did not change.
  const [generation, setGeneration] = useState(0);
  const refresh = () => {
    delivery.reload();
    setGeneration((g) => g + 1);
  };
  const data = delivery.data;
  const replays = data?.replays ?? [];
  const moving = data !== undefined && (inProgress(data.status) || replays.some((r) => inProgress(r.status)));
  useLiveRefresh(moving, delivery.refresh, data && `${data.status}|${data.attempts}|${replays.map((r) => r.status).join(',')}`);

  if (delivery.state === 'loading') {
    return (
      <div class="delivery-page">
        <PageHeader title="Delivery" />
        <Loading label="Loading the delivery…" />
      </div>
    );
  }
  if (delivery.state === 'error') {
    const notFound = delivery.problem.status === 404;
    return (
      <div class="delivery-page">
        <PageHeader title={notFound ? 'Delivery not found' : 'Delivery'} />
        {/* The API's problem (an alert, with its trace id), then what to do about a missing delivery. */}
        <ProblemView problem={delivery.problem} onRetry={notFound ? undefined : refresh} />
        {notFound ? (
          <p>Check the id, or look for the delivery in the log: a delivery is deleted with its endpoint, and after its retention time.</p>
        ) : null}
        <p>
          <a href={href('deliveries')}>Back to the delivery log</a>
        </p>
      </div>
    );
  }
  return <DeliveryView delivery={delivery.data} live={moving} generation={generation} onRefresh={refresh} />;
}

function DeliveryView({
  delivery,
  live,
  generation,
  onRefresh,
}: {
  delivery: DeliveryDetail;
  live: boolean;
  generation: number;
  onRefresh: () => void;
}) {
  const { client } = useSession();
  const canReplay = useCan('webhook:replay');
  const endpoint = useLoad(() => client.call('getWebhook', { params: { endpointId: delivery.endpointId } }), [client, delivery.endpointId]);
  const [replay, setReplay] = useState<ReplayState>({ state: 'idle' });
  // One key per replay the user means on this page: a double click, a retry after a failure and a
  // click after success all send it again, so the API answers the same replay instead of a new one.
  const replayKey = useRef<string | null>(null);
  // Set at once on click (state updates only show on the next render, after a fast second click).
  const inFlight = useRef(false);

  const sendReplay = () => void replayNow();
  const replayNow = async () => {
    if (inFlight.current) return;
    inFlight.current = true;
    replayKey.current ??= newIdempotencyKey();
    setReplay({ state: 'sending' });
    try {
      const created = await client.call('replayWebhookDelivery', {
        params: { deliveryId: delivery.deliveryId },
        idempotencyKey: replayKey.current,
      });
      setReplay({ state: 'done', delivery: created });
      // The source now lists its replay ("Replayed as").
      onRefresh();
    } catch (e) {
      setReplay({ state: 'error', problem: asProblem(e) });
    } finally {
      inFlight.current = false;
    }
  };

  const payload = JSON.stringify(delivery.payload, null, 2) ?? 'null';
  const { replays, eventId } = delivery;
  const sending = replay.state === 'sending';
  return (
    <div class="delivery-page">
      <PageHeader title={`Delivery ${delivery.deliveryId}`}>
        <span class="muted delivery-live" role="status">
          {live ? 'Updates by itself while in progress' : ''}
        </span>
        <button type="button" class="button" onClick={onRefresh}>
          Refresh
        </button>
        {canReplay && REPLAYABLE.has(delivery.status) ? (
          // `aria-disabled`, not `disabled`, while sending: `disabled` would drop keyboard focus; the click is ignored instead.
          <button type="button" class="button button-primary" onClick={sendReplay} aria-disabled={sending ? 'true' : undefined}>
            {sending ? 'Replaying…' : 'Replay'}
          </button>
        ) : null}
      </PageHeader>
      <p class="delivery-back">
        <a href={href('deliveries')}>Delivery log</a>
        {' · '}
        <a href={href('deliveries', { endpointId: delivery.endpointId })}>This endpoint’s deliveries</a>
      </p>
      <div class="delivery-replay-result" aria-live="polite">
        {replay.state === 'done' ? (
          <p class="success">
            Replay queued as a new delivery: <DeliveryLink deliveryId={replay.delivery.deliveryId} />. Open it to follow its attempts; this
            delivery is unchanged.
          </p>
        ) : null}
      </div>
      {replay.state === 'error' ? <ReplayProblem problem={replay.problem} endpointId={delivery.endpointId} onRetry={sendReplay} /> : null}

      <section class="card delivery-summary" aria-labelledby="delivery-summary-title">
        <h2 id="delivery-summary-title" class="visually-hidden">
          Summary
        </h2>
        <dl class="summary">
          <dt>Delivery id</dt>
          <dd class="delivery-copy">
            <code>{delivery.deliveryId}</code> <CopyButton text={delivery.deliveryId} label="Copy delivery id" />
          </dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={delivery.status} />
          </dd>
          <dt>Event type</dt>
          <dd>
            <code>{delivery.eventType}</code>
          </dd>
          {eventId ? (
            <>
              <dt>Event id</dt>
              <dd class="delivery-copy">
                <code>{eventId}</code> <CopyButton text={eventId} label="Copy event id" />
              </dd>
            </>
          ) : null}
          <dt>Endpoint</dt>
          <dd>
            <EndpointLink endpointId={delivery.endpointId} endpoint={endpoint.data} />
            {endpoint.state === 'ready' && !endpoint.data.enabled ? (
              <span class="badge badge-off delivery-inline-badge">Disabled</span>
            ) : null}
            {endpoint.data ? <span class="delivery-endpoint-url mono muted">{endpoint.data.url}</span> : null}
          </dd>
          <dt>Attempts</dt>
          <dd>{delivery.attempts}</dd>
          <dt>Next attempt</dt>
          <dd>
            <NextAttempt status={delivery.status} at={delivery.nextAttemptAt} />
          </dd>
          <dt>Last response status</dt>
          <dd>{delivery.lastResponseStatus === null ? <span class="muted">—</span> : <code>{delivery.lastResponseStatus}</code>}</dd>
          <dt>Last error</dt>
          <dd>
            <FailureReason reason={delivery.lastError} />
          </dd>
          <dt>Replay of</dt>
          <dd>{delivery.replayedFrom ? <DeliveryLink deliveryId={delivery.replayedFrom} /> : <span class="muted">Not a replay</span>}</dd>
          <dt>Replayed as</dt>
          <dd>
            <ReplayList replays={replays} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time iso={delivery.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time iso={delivery.updatedAt} />
          </dd>
        </dl>
      </section>

      <DeliveryAttempts delivery={delivery} generation={generation} />

      {eventId ? <SameEvent delivery={delivery} eventId={eventId} /> : null}

      <section aria-labelledby="delivery-payload-title">
        <div class="delivery-section-head">
          <h2 id="delivery-payload-title">Payload</h2>
          <CopyButton text={payload} label="Copy payload" />
        </div>
        <pre class="delivery-payload">{payload}</pre>
      </section>
    </div>
  );
}

/** "Replayed as": each replay with its status and time, newest first. */
function ReplayList({ replays }: { replays: readonly DeliveryReplay[] }) {
  if (replays.length === 0) return <span class="muted">Not replayed</span>;
  return (
    <ul class="delivery-replays">
      {replays.map((r) => (
        <li key={r.deliveryId}>
          <span class="visually-hidden">Replayed as </span>
          <DeliveryLink deliveryId={r.deliveryId} /> <StatusBadge status={r.status} /> <ShortTime iso={r.createdAt} />
        </li>
      ))}
    </ul>
  );
}

/** The same event's deliveries to the workspace's other endpoints (the log's `eventId` filter). */
function SameEvent({ delivery, eventId }: { delivery: Delivery; eventId: string }) {
  const { client } = useSession();
  const siblings = useLoad(
    () =>
      client
        .call('listDeliveries', { query: { eventId, limit: 50 } })
        .then((page) => page.items.filter((d) => d.endpointId !== delivery.endpointId)),
    [client, eventId, delivery.endpointId],
  );
  const directory = useEndpointDirectory(siblings.state === 'ready' && siblings.data.length > 0);
  const labels = useMemo(() => endpointLabels(directory.data ?? []), [directory.data]);
  const endpoints = useMemo(() => new Map((directory.data ?? []).map((e) => [e.endpointId, e])), [directory.data]);
  return (
    <section class="delivery-same-event" aria-labelledby="delivery-same-event-title">
      <div class="delivery-section-head">
        <h2 id="delivery-same-event-title">Same event, other endpoints</h2>
      </div>
      {siblings.state === 'loading' ? <Loading label="Loading the event’s other deliveries…" /> : null}
      {siblings.state === 'error' ? <ProblemView problem={siblings.problem} onRetry={() => siblings.reload()} /> : null}
      {siblings.state === 'ready' && siblings.data.length === 0 ? (
        <Empty title="No other endpoint received this event">
          <p>Only this endpoint subscribes to {delivery.eventType}, or the others were disabled or created later.</p>
        </Empty>
      ) : null}
      {siblings.state === 'ready' && siblings.data.length > 0 ? (
        <div class="table-wrap">
          <table class="delivery-table">
            <caption class="visually-hidden">Deliveries of event {eventId} to other endpoints</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {siblings.data.map((d) => (
                <tr key={d.deliveryId}>
                  <th scope="row" class="delivery-id">
                    <DeliveryLink deliveryId={d.deliveryId} />
                  </th>
                  <td class="wrap">
                    <EndpointLink endpointId={d.endpointId} endpoint={endpoints.get(d.endpointId)} label={labels.get(d.endpointId)} />
                  </td>
                  <td>
                    <StatusBadge status={d.status} />
                  </td>
                  <td>
                    <ShortTime iso={d.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** Why a replay was refused: a disabled endpoint says what to do; anything else is the API's problem. */
function ReplayProblem({ problem, endpointId, onRetry }: { problem: ApiProblem; endpointId: string; onRetry: () => void }) {
  if (problem.tag === 'EndpointDisabled') {
    return (
      <div class="notice delivery-replay-refused" role="alert">
        <p>
          <strong>The endpoint is disabled, so this delivery cannot be replayed.</strong> Enable the endpoint first, then replay the
          delivery.
        </p>
        <p>
          <a href={href(`endpoints/${endpointId}`)}>Open the endpoint to enable it</a>
        </p>
      </div>
    );
  }
  return <ProblemView problem={problem} onRetry={problem.status === 409 ? undefined : onRetry} />;
}
