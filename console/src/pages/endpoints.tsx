/**
 * The endpoints list (#/endpoints): each endpoint's URL (its link), description, event types,
 * enabled state, failure streak, 24 h success rate and last attempt, with "load more" paging.
 */
import { useState } from 'preact/hooks';
import type { Endpoint } from '../api/contract';
import { usePaged } from '../components/load';
import { Empty, LoadMore, Loading, PageHeader, ProblemView, Time, percent } from '../components/ui';
import { href, navigate } from '../router';
import { useCan, useSession } from '../session';
import '../styles/endpoints.css';

const PAGE_SIZE = 25;

// The URL of the endpoint this tab just deleted: the list says so once.
let deletedUrl: string | null = null;

/** Tells the list (shown next) that this endpoint was deleted. */
export function noteDeleted(url: string): void {
  deletedUrl = url;
}

/** An endpoint's enabled state, in words and colour. */
export function EnabledBadge({ enabled }: { enabled: boolean }) {
  return <span class={`badge ${enabled ? 'badge-on' : 'badge-off'}`}>{enabled ? 'Enabled' : 'Disabled'}</span>;
}

/** An endpoint's event types, one chip each. */
export function TypeChips({ types }: { types: readonly string[] }) {
  return (
    <ul class="type-chips">
      {types.map((type) => (
        <li key={type} class="mono">
          {type}
        </li>
      ))}
    </ul>
  );
}

/** A failure streak (consecutive failed attempts), marked when above 0. */
export function Streak({ count }: { count: number }) {
  return <span class={count > 0 ? 'streak-bad' : undefined}>{count}</span>;
}

/** The workspace's webhook endpoints. */
export function EndpointsPage() {
  const { client, portal } = useSession();
  const canWrite = useCan('webhook:write');
  const [deleted] = useState(() => {
    const url = deletedUrl;
    deletedUrl = null;
    return url;
  });
  const list = usePaged((cursor) => client.call('listWebhooks', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  const newButton = canWrite ? (
    <button type="button" class="button button-primary" onClick={() => navigate(href('endpoints/new'))}>
      New endpoint
    </button>
  ) : null;

  return (
    <section>
      <PageHeader title="Endpoints">{newButton}</PageHeader>
      <p class="muted page-lead">
        Each endpoint is a receiver URL subscribed to event types. Open one to change its settings, see its health and deliveries, rotate
        its secret or recover failed deliveries.
      </p>
      {deleted ? (
        <p class="success" role="status">
          Endpoint <span class="mono break">{deleted}</span> deleted, with its delivery history.
        </p>
      ) : null}
      {list.state === 'loading' ? <Loading label="Loading endpoints…" /> : null}
      {list.state === 'error' && list.problem ? <ProblemView problem={list.problem} onRetry={() => list.reload()} /> : null}
      {list.state === 'ready' && list.items.length === 0 ? (
        <Empty title="No endpoints yet">
          {canWrite ? (
            <p>
              Create an endpoint for your receiver's URL to start receiving events. <a href={href('endpoints/new')}>Create an endpoint</a>
            </p>
          ) : (
            <p>This workspace has no endpoints.{portal ? '' : ' Creating one needs a token with the write scope.'}</p>
          )}
        </Empty>
      ) : null}
      {list.state === 'ready' && list.items.length > 0 ? (
        <>
          <div class="table-wrap">
            <table class="endpoints-table">
              <caption class="visually-hidden">Webhook endpoints</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Description</th>
                  <th scope="col">Event types</th>
                  <th scope="col">State</th>
                  <th scope="col">Failure streak</th>
                  <th scope="col">Success (24 h)</th>
                  <th scope="col">Last attempt</th>
                </tr>
              </thead>
              <tbody>
                {list.items.map((endpoint) => (
                  <EndpointRow key={endpoint.endpointId} endpoint={endpoint} />
                ))}
              </tbody>
            </table>
          </div>
          {list.problem ? <ProblemView problem={list.problem} onRetry={() => list.loadMore()} /> : null}
          <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onLoad={() => list.loadMore()} />
        </>
      ) : null}
    </section>
  );
}

function EndpointRow({ endpoint }: { endpoint: Endpoint }) {
  return (
    <tr>
      <td class="wrap endpoint-url" data-label="URL">
        <a href={href(`endpoints/${endpoint.endpointId}`)} class="mono">
          {endpoint.url}
        </a>
      </td>
      <td class="wrap" data-label="Description">
        {endpoint.description ?? <span class="muted">—</span>}
      </td>
      <td data-label="Event types">
        <TypeChips types={endpoint.eventTypes} />
      </td>
      <td data-label="State">
        <EnabledBadge enabled={endpoint.enabled} />
      </td>
      <td data-label="Failure streak">
        <Streak count={endpoint.consecutiveFailures} />
      </td>
      <td data-label="Success (24 h)">{percent(endpoint.health.successRate24h)}</td>
      <td class="endpoint-last" data-label="Last attempt">
        <Time iso={endpoint.health.lastAttemptAt} />
      </td>
    </tr>
  );
}
