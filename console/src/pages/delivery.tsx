/**
 * `#/deliveries/:id`, the delivery page: a delivery's summary, payload and attempt evidence, with
 * "Replay" for a failed one and copy buttons for the ids support asks for.
 */
import { useRef, useState } from 'preact/hooks';
import { newIdempotencyKey, type ApiProblem } from '../api/client';
import type { Delivery } from '../api/contract';
import { DeliveryAttempts } from '../components/delivery-attempts';
import { DeliveryLink, EndpointLink, FailureReason, NextAttempt } from '../components/delivery-parts';
import { asProblem, useLoad } from '../components/load';
import { CopyButton, Loading, PageHeader, ProblemView, StatusBadge, Time } from '../components/ui';
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
  const [generation, setGeneration] = useState(0);
  const delivery = useLoad(() => client.call('getWebhookDelivery', { params: { deliveryId } }), [client, deliveryId, generation]);
  const refresh = () => setGeneration((g) => g + 1);

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
  return <DeliveryView delivery={delivery.data} generation={generation} onRefresh={refresh} />;
}

function DeliveryView({ delivery, generation, onRefresh }: { delivery: Delivery; generation: number; onRefresh: () => void }) {
  const { client } = useSession();
  const canReplay = useCan('webhook:replay');
  const endpoint = useLoad(() => client.call('getWebhook', { params: { endpointId: delivery.endpointId } }), [client, delivery.endpointId]);
  const [replay, setReplay] = useState<ReplayState>({ state: 'idle' });
  // One key per replay the user means: a retry after a failure sends the same key, a success ends it.
  const replayKey = useRef<string | null>(null);

  const sendReplay = () => void replayNow();
  const replayNow = async () => {
    if (replay.state === 'sending') return;
    replayKey.current ??= newIdempotencyKey();
    setReplay({ state: 'sending' });
    try {
      const created = await client.call('replayWebhookDelivery', {
        params: { deliveryId: delivery.deliveryId },
        idempotencyKey: replayKey.current,
      });
      replayKey.current = null;
      setReplay({ state: 'done', delivery: created });
    } catch (e) {
      setReplay({ state: 'error', problem: asProblem(e) });
    }
  };

  const url = endpoint.data?.url;
  const payload = JSON.stringify(delivery.payload, null, 2) ?? 'null';
  return (
    <div class="delivery-page">
      <PageHeader title={`Delivery ${delivery.deliveryId}`}>
        <button type="button" class="button" onClick={onRefresh}>
          Refresh
        </button>
        {canReplay && REPLAYABLE.has(delivery.status) ? (
          // Not `disabled` while sending: that would drop keyboard focus; a second click is ignored instead.
          <button
            type="button"
            class="button button-primary"
            onClick={sendReplay}
            aria-disabled={replay.state === 'sending' ? 'true' : undefined}
          >
            {replay.state === 'sending' ? 'Replaying…' : 'Replay'}
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
          <dt>Endpoint</dt>
          <dd>
            <EndpointLink endpointId={delivery.endpointId} url={url} />
            {endpoint.state === 'ready' && !endpoint.data.enabled ? (
              <span class="badge badge-off delivery-inline-badge">Disabled</span>
            ) : null}
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
          <dt>Replayed from</dt>
          <dd>{delivery.replayedFrom ? <DeliveryLink deliveryId={delivery.replayedFrom} /> : <span class="muted">Not a replay</span>}</dd>
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

      <section aria-labelledby="delivery-payload-title">
        <div class="delivery-section-head">
          <h2 id="delivery-payload-title">Payload</h2>
          <CopyButton text={payload} label="Copy payload" />
        </div>
        <pre class="delivery-payload">{payload}</pre>
      </section>

      <DeliveryAttempts delivery={delivery} generation={generation} />
    </div>
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
