/**
 * A delivery's attempt evidence (docs/behaviour.md#attempt-evidence) on the delivery page, in
 * the [region] "Attempts": a compact table, one row per attempt (ordinal, time, outcome, response
 * status, duration, failure reason), each expandable by its disclosure button to the request
 * headers sent (custom ones too; secret values as recorded, `<redacted>`), the response body prefix and a copy button for its `x-trace-id`. The last HTTP
 * attempt of a dead-lettered delivery says it was the final one; of a delivery still retrying,
 * that it is being retried.
 */
import { useState } from 'preact/hooks';
import type { Attempt, Delivery } from '../api/contract';
import { plural } from '../plural';
import { REDACTED } from '../../../lambdas/contract/limits';
import { useSession } from '../session';
import { FailureReason, ShortTime } from './delivery-parts';
import { usePaged } from './load';
import { CopyButton, Empty, Loading, LoadMore, ProblemView } from './ui';

const OUTCOME_TEXT: Record<Attempt['outcome'], string> = {
  delivered: 'Delivered',
  failed: 'Failed, retried',
  failed_permanent: 'Failed permanently',
  dead_lettered: 'Dead-lettered',
};

/** Where an attempt stands among the delivery's: the last HTTP one of a delivery still retrying, or its final one. */
type Place = 'final' | 'retrying' | null;

/** An attempt's outcome in words and colour (the delivery status badge's colours). */
function OutcomeBadge({ attempt, place }: { attempt: Attempt; place: Place }) {
  // A retryable failure that nothing will retry: retries are exhausted or the delivery was dead-lettered.
  if (place === 'final') return <span class="badge badge-dead_lettered">Failed: final attempt</span>;
  if (place === 'retrying') return <span class="badge badge-failed">Failed, retrying</span>;
  return <span class={`badge badge-${attempt.outcome}`}>{OUTCOME_TEXT[attempt.outcome]}</span>;
}

/** A bookkeeping entry records a decision, not an HTTP request (docs/behaviour.md#terminal-bookkeeping). */
function isBookkeeping(attempt: Attempt): boolean {
  return attempt.durationMs === null && Object.keys(attempt.requestHeaders).length === 0 && attempt.responseStatus === null;
}

/**
 * The last HTTP attempt, when it failed retryably: final when nothing retries it (the delivery
 * was dead-lettered, or its retries are exhausted), retrying while a next attempt is due.
 */
function lastFailed(delivery: Delivery, attempts: readonly Attempt[], complete: boolean): { ordinal: number; place: Place } | null {
  const last = attempts.filter((a) => !isBookkeeping(a)).at(-1);
  if (!complete || !last || last.outcome !== 'failed') return null;
  if (delivery.status === 'dead_lettered' || (delivery.status === 'failed' && delivery.nextAttemptAt === null))
    return { ordinal: last.ordinal, place: 'final' };
  return delivery.status === 'failed' ? { ordinal: last.ordinal, place: 'retrying' } : null;
}

/** The [region] "Attempts": paged through, oldest first; loaded again when the delivery changes or on "Refresh". */
export function DeliveryAttempts({ delivery, generation }: { delivery: Delivery; generation: number }) {
  const { client } = useSession();
  const paged = usePaged(
    (cursor) => client.call('listWebhookDeliveryAttempts', { params: { deliveryId: delivery.deliveryId }, query: { cursor, limit: 50 } }),
    [client, delivery.deliveryId, delivery.attempts, delivery.status, delivery.updatedAt, generation],
  );
  // A reload keeps the table on screen until the new evidence comes (no flash, no jump).
  const refreshing = paged.state === 'loading' && paged.items.length > 0;
  const attempts = refreshing ? { ...paged, state: 'ready' as const } : paged;
  const last = lastFailed(delivery, attempts.items, !attempts.hasMore);
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
        <div class="table-wrap">
          <table class="attempts-table">
            <caption class="visually-hidden">
              {plural(attempts.items.length, 'entry', 'entries')} of attempt evidence, oldest first; open a row for its request headers and
              response body
            </caption>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Time</th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">
                  Status
                </th>
                <th scope="col" class="num">
                  Duration
                </th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            {attempts.items.map((attempt) => (
              <AttemptRows key={attempt.ordinal} attempt={attempt} place={attempt.ordinal === last?.ordinal ? last.place : null} />
            ))}
          </table>
        </div>
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
        <p>The delivery is queued and its first attempt is on its way; this page shows it when it is made.</p>
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

/** One attempt: its row, and (when opened) the row of its evidence. One `<tbody>` each, so the pair stays together. */
function AttemptRows({ attempt, place }: { attempt: Attempt; place: Place }) {
  const [open, setOpen] = useState(false);
  const bookkeeping = isBookkeeping(attempt);
  const name = bookkeeping ? `Entry ${attempt.ordinal}` : `Attempt ${attempt.ordinal}`;
  const detailId = `attempt-${attempt.ordinal}-detail`;
  return (
    <tbody class={`attempt outcome-${attempt.outcome}${open ? ' is-open' : ''}`}>
      <tr>
        <th scope="row">
          {bookkeeping ? (
            // A recorded decision has no request to show: nothing to open.
            <span class="attempt-name">{name}</span>
          ) : (
            <button
              type="button"
              class="attempt-toggle"
              aria-expanded={open ? 'true' : 'false'}
              aria-controls={detailId}
              onClick={() => setOpen(!open)}
            >
              <span class="attempt-chevron" aria-hidden="true" />
              {name}
            </button>
          )}
        </th>
        <td>
          <ShortTime iso={attempt.timestamp} seconds />
        </td>
        <td>
          <OutcomeBadge attempt={attempt} place={place} />
        </td>
        <td class="num">
          {bookkeeping ? (
            <span class="muted">—</span>
          ) : attempt.responseStatus === null ? (
            <span class="muted">None</span>
          ) : (
            <code>{attempt.responseStatus}</code>
          )}
        </td>
        <td class="num">{attempt.durationMs === null ? <span class="muted">—</span> : `${attempt.durationMs.toLocaleString()} ms`}</td>
        <td class="attempt-reason">
          {bookkeeping ? <span class="muted">No request: a recorded decision. </span> : null}
          <FailureReason reason={attempt.failureReason} />
        </td>
      </tr>
      {open && !bookkeeping ? (
        <tr id={detailId} class="attempt-detail">
          <td colSpan={6}>
            <AttemptEvidence attempt={attempt} />
          </td>
        </tr>
      ) : null}
    </tbody>
  );
}

/** An attempt's request headers (custom ones included; a secret value as recorded, `<redacted>`), response body prefix and trace id. */
function AttemptEvidence({ attempt }: { attempt: Attempt }) {
  const headers = Object.entries(attempt.requestHeaders).sort(([a], [b]) => a.localeCompare(b));
  const traceId = attempt.requestHeaders['x-trace-id'];
  const redacted = headers.some(([, value]) => value === REDACTED);
  return (
    <div class="attempt-evidence">
      {traceId ? (
        <p class="delivery-trace">
          Trace id <code>{traceId}</code> <CopyButton text={traceId} label={`Copy trace id of attempt ${attempt.ordinal}`} />
        </p>
      ) : null}
      <h3 class="delivery-attempt-subtitle">Request headers</h3>
      {headers.length ? (
        <>
          <table class="attempt-headers">
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
                  <td class={`mono wrap${value === REDACTED ? ' redacted-value' : ''}`}>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {redacted ? (
            <p class="field-help">
              A secret value (an API key, a token, the OAuth 2.0 bearer token) is never recorded: it shows as {REDACTED}.
            </p>
          ) : null}
        </>
      ) : (
        <p class="muted">No request headers were recorded.</p>
      )}
      <h3 class="delivery-attempt-subtitle">Response body (prefix)</h3>
      {attempt.responseBody ? <pre class="delivery-body">{attempt.responseBody}</pre> : <p class="muted">No response body.</p>}
    </div>
  );
}
