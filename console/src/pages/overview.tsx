/**
 * The workspace at a glance: endpoint counts, the last 24 h of attempts and deliveries, and what
 * needs someone to act (dead letters not replayed yet, disabled endpoints) with links to where to
 * act, and the recent notifications not acknowledged yet.
 */
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import type { Notification, Overview } from '../api/contract';
import { endpointLabels, useEndpointDirectory } from '../components/delivery-parts';
import { useLoad, type Load } from '../components/load';
import { plural } from '../plural';
import { Empty, Loading, PageHeader, ProblemView, Time, percent } from '../components/ui';
import { AckButton, ACTION_KINDS, NotificationKind, NotificationLinks } from '../components/workspace-notification';
import { href } from '../router';
import { useCan, useSession } from '../session';
import '../styles/workspace.css';

/** Notifications older than this no longer count as needing action on the overview. */
const RECENT_DAYS = 7;
/** At most this many notifications are listed under "Needs action". */
const SHOWN = 5;

/** The recent notifications not acknowledged yet, or null when the token may not list them. */
type NotificationsLoad = Load<readonly Notification[] | null> & { reload(): void };

/** The overview page. */
export function OverviewPage() {
  const { client } = useSession();
  const canList = useCan('notification:list');
  // Fresh numbers on every visit (the session's copy is from sign-in).
  const overview = useLoad(() => client.call('getWorkspaceOverview'), [client]);
  const notifications = useLoad(
    () =>
      canList
        ? client.call('listNotifications', { query: { acknowledged: 'false', limit: 50 } }).then((page) => page.items)
        : Promise.resolve(null),
    [client, canList],
  );

  let body;
  if (overview.state === 'loading') body = <Loading label="Loading the overview…" />;
  else if (overview.state === 'error') body = <ProblemView problem={overview.problem} onRetry={() => overview.reload()} />;
  else {
    body = (
      <>
        {overview.data.webhooks.total === 0 ? <FirstRun /> : null}
        <Counts overview={overview.data} />
        <NeedsAction overview={overview.data} notifications={notifications} />
      </>
    );
  }

  return (
    <section>
      <PageHeader title="Overview">
        {overview.state === 'ready' ? (
          <button
            type="button"
            class="button"
            onClick={() => {
              overview.reload();
              notifications.reload();
            }}
          >
            Refresh
          </button>
        ) : null}
      </PageHeader>
      {body}
    </section>
  );
}

/** No endpoint yet: what an endpoint is and how to create the first one. */
function FirstRun() {
  const canWrite = useCan('webhook:write');
  const embedded = useSession().portal !== null;
  return (
    <div class="card ws-first-run">
      <h2>Add your first endpoint</h2>
      <p>
        An endpoint is a URL of yours that receives a signed <span class="mono">POST</span> for every event of the types it subscribes to.
        Look through the <a href={href('event-types')}>event types</a>, then create one and send it a test event.
      </p>
      {canWrite ? (
        <p>
          <a class="button button-primary" href={href('endpoints/new')}>
            Create an endpoint
          </a>
        </p>
      ) : (
        <p class="muted">
          {embedded
            ? 'Endpoints can be viewed here but not created.'
            : 'Your API token may not create endpoints: ask a workspace admin for a token with the write scope.'}
        </p>
      )}
    </div>
  );
}

function Stat({ label, value, children }: { label: string; value: number | string; children?: ComponentChildren }) {
  return (
    <li class="card">
      <span class="stat-label">{label}</span>
      <span class="stat">{value}</span>
      {children ? <span class="ws-stat-more">{children}</span> : null}
    </li>
  );
}

/** The counts, as cards. */
function Counts({ overview }: { overview: Overview }) {
  const { webhooks, deliveries24h: d } = overview;
  const attempts = d.delivered + d.failed;
  return (
    <>
      <h2 class="ws-cards-title">Endpoints and workspace</h2>
      <ul class="cards ws-cards">
        <Stat label="Endpoints" value={webhooks.total}>
          <a href={href('endpoints')}>
            {webhooks.enabled.toLocaleString('en-US')} enabled, {webhooks.disabled.toLocaleString('en-US')} disabled
          </a>
        </Stat>
        {/* A caller that may not list members or tokens (a portal session) gets no count of them (docs/behaviour.md#portal-sessions). */}
        {overview.members !== null ? (
          <Stat label="Members" value={overview.members}>
            <a href={href('members')}>View members</a>
          </Stat>
        ) : null}
        {overview.apiTokens !== null ? (
          <Stat label="API tokens" value={overview.apiTokens}>
            <a href={href('tokens')}>View API tokens</a>
          </Stat>
        ) : null}
      </ul>
      <h2 class="ws-cards-title">Last 24 hours</h2>
      <ul class="cards ws-cards">
        <Stat label="Delivered attempts" value={d.delivered}>
          {attempts > 0 ? `${percent(d.delivered / attempts)} of HTTP attempts` : 'No HTTP attempts yet'}
        </Stat>
        <Stat label="Failed attempts" value={d.failed}>
          {/* Attempts, not deliveries: a delivery that failed twice and then got through counts two here. */}
          {attempts > 0 ? `${percent(d.failed / attempts)} of HTTP attempts, retryable and permanent` : 'Retryable and permanent'}
        </Stat>
        <Stat label="Dead-lettered deliveries" value={d.deadLettered}>
          {d.deadLettered > 0 ? (
            <a href={href('deliveries', { status: ['dead_lettered'] })}>View dead-lettered deliveries</a>
          ) : (
            'None stopped retrying'
          )}
        </Stat>
      </ul>
    </>
  );
}

/** What needs someone to act: disabled endpoints, dead letters not replayed yet, and the recent notifications about them. */
function NeedsAction({ overview, notifications }: { overview: Overview; notifications: NotificationsLoad }) {
  const disabled = overview.webhooks.disabled;
  const dead = overview.deadLetteredUnreplayed24h;
  // Acknowledged here: hidden at once, before the list is read again.
  const [acked, setAcked] = useState<ReadonlySet<string>>(new Set());
  const since = Date.now() - RECENT_DAYS * 24 * 3600 * 1000;
  const recent =
    notifications.state === 'ready' && notifications.data
      ? notifications.data.filter(
          (n) =>
            ACTION_KINDS.has(n.kind) &&
            Date.parse(n.createdAt) >= since &&
            !acked.has(n.notificationId) &&
            // With no endpoint disabled any more, "endpoint disabled" has been dealt with; with every dead letter replayed, so has "dead-lettered".
            !(n.kind === 'endpoint.disabled' && disabled === 0) &&
            !(n.kind === 'delivery.dead_lettered' && dead === 0),
        )
      : [];
  const nothing = disabled === 0 && dead === 0 && recent.length === 0;

  return (
    <section class="section" aria-labelledby="needs-action">
      <h2 id="needs-action">Needs action</h2>
      {nothing && notifications.state !== 'loading' ? (
        <Empty title="Nothing needs action">
          No endpoint is disabled and no delivery dead-lettered in the last 24 hours is waiting for a replay. Past changes are in the{' '}
          <a href={href('audit')}>audit log</a>.
        </Empty>
      ) : (
        <>
          {disabled > 0 || dead > 0 ? (
            <ul class="ws-actions">
              {disabled > 0 ? (
                <li class="card ws-action">
                  <span>
                    <strong>
                      {plural(disabled, 'endpoint')} {disabled === 1 ? 'is' : 'are'} disabled
                    </strong>{' '}
                    and receive{disabled === 1 ? 's' : ''} nothing. Fix the receiver, enable the endpoint, then recover its failed
                    deliveries.
                  </span>
                  <a href={href('endpoints')}>View disabled endpoints</a>
                </li>
              ) : null}
              {dead > 0 ? (
                <li class="card ws-action">
                  <span>
                    <strong>
                      {plural(dead, 'delivery', 'deliveries')} {dead === 1 ? 'was' : 'were'} dead-lettered
                    </strong>{' '}
                    in the last 24 hours and {dead === 1 ? 'has' : 'have'} not been replayed: {dead === 1 ? 'it' : 'they'} stopped retrying.
                    Replay {dead === 1 ? 'it' : 'them'} once the receiver is fixed.
                  </span>
                  <a href={href('deliveries', { status: ['dead_lettered'] })}>View dead-lettered deliveries</a>
                </li>
              ) : null}
            </ul>
          ) : null}
          <RecentNotifications
            notifications={notifications}
            recent={recent}
            onAcknowledged={(id) => setAcked((before) => new Set([...before, id]))}
          />
        </>
      )}
    </section>
  );
}

function RecentNotifications({
  notifications,
  recent,
  onAcknowledged,
}: {
  notifications: NotificationsLoad;
  recent: readonly Notification[];
  onAcknowledged: (notificationId: string) => void;
}) {
  const canAck = useCan('notification:ack');
  const directory = useEndpointDirectory(recent.some((n) => n.endpointId));
  const labels = useMemo(() => endpointLabels(directory.data ?? []), [directory.data]);
  if (notifications.state === 'loading') return <Loading label="Loading notifications…" />;
  if (notifications.state === 'error') return <ProblemView problem={notifications.problem} onRetry={() => notifications.reload()} />;
  if (!notifications.data || recent.length === 0) return null;
  return (
    <>
      <h3>Recent notifications</h3>
      <ul class="ws-notifications">
        {recent.slice(0, SHOWN).map((n) => (
          <li key={n.notificationId} class="card">
            <p class="ws-notification-head">
              <NotificationKind kind={n.kind} /> <Time iso={n.createdAt} />
            </p>
            <p class="ws-message">{n.message}</p>
            <div class="ws-notification-foot">
              <NotificationLinks notification={n} endpointLabel={n.endpointId ? labels.get(n.endpointId) : undefined} />
              {canAck ? <AckButton notification={n} onAcknowledged={() => onAcknowledged(n.notificationId)} /> : null}
            </div>
          </li>
        ))}
      </ul>
      <p>
        <a href={href('notifications')}>
          {recent.length > SHOWN
            ? `All notifications (${recent.length - SHOWN} more not acknowledged from the last ${RECENT_DAYS} days)`
            : 'All notifications'}
        </a>
      </p>
    </>
  );
}
