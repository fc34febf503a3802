/**
 * A delivery's attempt evidence (docs/behaviour.md#attempt-evidence) as a timeline on the delivery
 * page, inside the [region] "Attempts": each attempt's outcome, time, duration, failure reason,
 * response status and body prefix, request headers, and a copy button for its `x-trace-id` for
 * support requests.
 */
import type { Attempt, Delivery } from '../api/contract';
import { useSession } from '../session';
import { FailureReason } from './delivery-parts';
import { usePaged } from './load';
import { CopyButton, Empty, Loading, LoadMore, ProblemView, Time } from './ui';

const OUTCOME_TEXT: Record<Attempt['outcome'], string> = {
  delivered: 'Delivered',
  // An attempt's `failed` is retryable, yet the last one before dead-lettering is `failed` too.
  failed: 'Failed (retryable)',
  failed_permanent: 'Failed permanently',
  dead_lettered: 'Dead-lettered',
};

/** An attempt's outcome in words and colour (the delivery status badge's colours). */
function OutcomeBadge({ outcome }: { outcome: Attempt['outcome'] }) {
  return <span class={`badge badge-${outcome}`}>{OUTCOME_TEXT[outcome]}</span>;
}

/** A bookkeeping entry records a decision, not an HTTP request (docs/behaviour.md#terminal-bookkeeping). */
function isBookkeeping(attempt: Attempt): boolean {
  return attempt.durationMs === null && Object.keys(attempt.requestHeaders).length === 0 && attempt.responseStatus === null;
}

/** The [region] "Attempts": paged through, oldest first. `generation` changes on "Refresh". */
export function DeliveryAttempts({ delivery, generation }: { delivery: Delivery; generation: number }) {
  const { client } = useSession();
  const paged = usePaged(
    (cursor) => client.call('listWebhookDeliveryAttempts', { params: { deliveryId: delivery.deliveryId }, query: { cursor, limit: 50 } }),
    [client, delivery.deliveryId, generation],
  );
  // "Refresh" keeps the timeline on screen until the new evidence comes (no flash, no jump).
  const refreshing = paged.state === 'loading' && paged.items.length > 0;
  const attempts = refreshing ? { ...paged, state: 'ready' as const } : paged;
  return (
    <section class="delivery-attempts" aria-labelledby="delivery-attempts-title">
      <div class="delivery-section-head">
        <h2 id="delivery-attempts-title">Attempts</h2>
        <span class="muted" role="status">
          {refreshing ? 'Refreshing…' : ''}
        </span>
      </div>
      {attempts.state === 'loading' ? <Loading label="Loading attempts…" /> : null}
      {attempts.state === 'error' && attempts.problem ? <ProblemView problem={attempts.problem} onRetry={() => attempts.reload()} /> : null}
      {attempts.state === 'ready' && attempts.items.length === 0 ? <NoAttempts delivery={delivery} /> : null}
      {attempts.state === 'ready' && attempts.items.length > 0 ? (
        <ol class="timeline">
          {attempts.items.map((attempt) => (
            <AttemptEntry key={attempt.ordinal} attempt={attempt} />
          ))}
        </ol>
      ) : null}
      {attempts.state === 'ready' && attempts.problem ? (
        <ProblemView problem={attempts.problem} onRetry={() => attempts.loadMore()} />
      ) : null}
      {attempts.state === 'ready' ? (
        <LoadMore hasMore={attempts.hasMore} loading={attempts.loadingMore} onLoad={() => attempts.loadMore()} label="Load more attempts" />
      ) : null}
    </section>
  );
}

function NoAttempts({ delivery }: { delivery: Delivery }) {
  if (delivery.status === 'pending') {
    return (
      <Empty title="No attempts yet">
        <p>The delivery is queued and its first attempt is on its way. Use “Refresh” to see it.</p>
      </Empty>
    );
  }
  return (
    <Empty title="No attempts were recorded">
      <p>
        {delivery.lastError === 'endpoint_disabled'
          ? 'The endpoint was disabled when the event was published, so the delivery was held without a request. Enable the endpoint, then replay it.'
          : 'This delivery has no attempt evidence.'}
      </p>
    </Empty>
  );
}

function AttemptEntry({ attempt }: { attempt: Attempt }) {
  const headers = Object.entries(attempt.requestHeaders).sort(([a], [b]) => a.localeCompare(b));
  const traceId = attempt.requestHeaders['x-trace-id'];
  const bookkeeping = isBookkeeping(attempt);
  const titleId = `attempt-${attempt.ordinal}`;
  return (
    <li class={`outcome-${attempt.outcome} delivery-attempt`}>
      <div class="delivery-attempt-head">
        <h3 id={titleId}>{bookkeeping ? `Entry ${attempt.ordinal}` : `Attempt ${attempt.ordinal}`}</h3>
        <OutcomeBadge outcome={attempt.outcome} />
        <Time iso={attempt.timestamp} />
      </div>
      <dl class="summary">
        {bookkeeping ? (
          <>
            <dt>Kind</dt>
            <dd>A recorded decision: no request was sent</dd>
          </>
        ) : (
          <>
            <dt>Duration</dt>
            <dd>{attempt.durationMs === null ? <span class="muted">—</span> : `${attempt.durationMs.toLocaleString()} ms`}</dd>
            <dt>Response status</dt>
            <dd>{attempt.responseStatus === null ? <span class="muted">No response</span> : <code>{attempt.responseStatus}</code>}</dd>
          </>
        )}
        <dt>Failure reason</dt>
        <dd>
          <FailureReason reason={attempt.failureReason} />
        </dd>
        {traceId ? (
          <>
            <dt>Trace id</dt>
            <dd class="delivery-trace">
              <code>{traceId}</code> <CopyButton text={traceId} label={`Copy trace id of attempt ${attempt.ordinal}`} />
            </dd>
          </>
        ) : null}
      </dl>
      {bookkeeping ? null : (
        <>
          <h4 class="delivery-attempt-subtitle">Response body (prefix)</h4>
          {attempt.responseBody ? <pre class="delivery-body">{attempt.responseBody}</pre> : <p class="muted">No response body.</p>}
          {headers.length ? (
            <details class="delivery-headers">
              <summary>Request headers ({headers.length})</summary>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Request headers of attempt {attempt.ordinal}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Header</th>
                      <th scope="col">Value</th>
                    </tr>
                  </thead>
                  <tbody>
                    {headers.map(([name, value]) => (
                      <tr key={name}>
                        <td class="mono delivery-header-name">{name}</td>
                        <td class="mono wrap">{value}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          ) : null}
        </>
      )}
    </li>
  );
}
