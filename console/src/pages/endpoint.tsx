/**
 * The endpoint page (#/endpoints/:id), titled by the endpoint's description (else its host): its
 * actions, then four sections a person can jump to from "On this page": overview and health,
 * the endpoint's delivery log, its settings, and its delivery options (custom headers,
 * authentication, delivery rate, payload filter). A section named in the address
 * (`?section=deliveries`) is scrolled to when the page opens.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Endpoint } from '../api/contract';
import { EndpointActions } from '../components/endpoint-actions';
import { EndpointForm } from '../components/endpoint-form';
import { EndpointOptions } from '../components/endpoint-options';
import { HealthPanel } from '../components/health-chart';
import { useLoad } from '../components/load';
import { CopyButton, Empty, Loading, PageHeader, ProblemView, Time, percent } from '../components/ui';
import { endpointLabel } from '../components/delivery-parts';
import { href, navigate, replaceRoute } from '../router';
import { useCan, useSession } from '../session';
import { DeliveryLog } from './deliveries';
import { EnabledBadge, noteDeleted, Streak, TypeChips } from './endpoints';
import { takeJustCreated } from './new-endpoint';
import { DISABLE_THRESHOLD } from '../../../lambdas/contract/limits';
import '../styles/endpoints.css';

/** The page's sections, in order: the `section` query value and the heading each link jumps to. */
const SECTIONS = [
  { section: 'overview', title: 'Overview and health' },
  { section: 'deliveries', title: 'Deliveries' },
  { section: 'settings', title: 'Settings' },
  { section: 'options', title: 'Delivery options' },
] as const;

type Section = (typeof SECTIONS)[number]['section'];

/** Scrolls a section's heading to the top and gives it focus, so keyboard and screen reader users land there too. */
function jumpTo(section: string): void {
  const heading = document.getElementById(`endpoint-${section}-title`);
  if (!heading) return;
  heading.scrollIntoView({ block: 'start' });
  heading.focus({ preventScroll: true });
}

/** "On this page": in-page links that keep the address shareable (`?section=…`) without leaving the page. */
function SectionNav({ endpointId, query }: { endpointId: string; query: URLSearchParams }) {
  const to = (section: Section) => href(`endpoints/${encodeURIComponent(endpointId)}`, { ...Object.fromEntries(query), section });
  return (
    <nav class="section-nav" aria-label="On this page">
      {/* The nav's name, shown; hidden from screen readers, which hear it as the landmark's name. */}
      <span class="section-nav-label muted" aria-hidden="true">
        On this page
      </span>
      <ul>
        {SECTIONS.map(({ section, title }) => (
          <li key={section}>
            <a
              href={to(section)}
              onClick={(e) => {
                e.preventDefault();
                replaceRoute(to(section));
                jumpTo(section);
              }}
            >
              {title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A section's heading: a jump target (focusable by script, not by Tab). */
function SectionTitle({ section }: { section: Section }) {
  const { title } = SECTIONS.find((s) => s.section === section)!;
  return (
    <h2 id={`endpoint-${section}-title`} tabIndex={-1}>
      {title}
    </h2>
  );
}

function Breadcrumb() {
  return (
    <nav class="breadcrumb" aria-label="Breadcrumb">
      <a href={href('endpoints')}>Endpoints</a>
    </nav>
  );
}

/** One endpoint. */
export function EndpointPage({ endpointId, query }: { endpointId: string; query: URLSearchParams }) {
  const { client } = useSession();
  const loaded = useLoad(() => client.call('getWebhook', { params: { endpointId } }), [client, endpointId]);
  // The endpoint as the last answer about it said (a save or an enable/disable).
  const [changed, setChanged] = useState<Endpoint | null>(null);
  const [created] = useState(() => takeJustCreated(endpointId));
  const [flash, setFlash] = useState('');
  const [logGeneration, setLogGeneration] = useState(0);
  const endpoint = changed ?? loaded.data;
  // A shared link to a section opens there, once the page is drawn.
  const shown = endpoint !== undefined;
  useEffect(() => {
    const section = query.get('section');
    if (shown && section) jumpTo(section);
  }, [shown]);

  if (!endpoint) {
    // A malformed id in the address is as good as an unknown one.
    if (
      loaded.state === 'error' &&
      (loaded.problem.tag === 'EndpointNotFound' ||
        (loaded.problem.tag === 'ValidationError' && loaded.problem.issues.some((i) => i.path.startsWith('path.'))))
    ) {
      return (
        <section>
          <Breadcrumb />
          <PageHeader title="Endpoint not found" />
          <Empty title="There is no endpoint with this id in the workspace">
            <p>
              It may have been deleted, or the link is mistyped (<span class="mono">{endpointId}</span>).{' '}
              <a href={href('endpoints')}>Back to the endpoints</a>
            </p>
          </Empty>
        </section>
      );
    }
    return (
      <section>
        <Breadcrumb />
        <PageHeader title="Endpoint" />
        {loaded.state === 'error' ? (
          <ProblemView problem={loaded.problem} onRetry={() => loaded.reload()} />
        ) : (
          <Loading label="Loading the endpoint…" />
        )}
      </section>
    );
  }

  return (
    <section class="endpoint-page">
      <Breadcrumb />
      <PageHeader title={endpointLabel(endpoint)} />
      <p class="endpoint-heading-url mono">{endpoint.url}</p>
      <SectionNav endpointId={endpoint.endpointId} query={query} />
      {created ? (
        <p class="success" role="status">
          Endpoint created. Its signing secret is never shown by itself: use “Rotate secret” to get one your receiver can verify signatures
          with, then “Send test event” to try it.
        </p>
      ) : null}
      {!endpoint.enabled ? (
        <p class="notice">
          <strong>This endpoint is disabled.</strong> Nothing is sent to it; events for it are held as failed permanently
          (endpoint_disabled). Enable it, then recover the held deliveries.
        </p>
      ) : null}
      <EndpointActions
        endpoint={endpoint}
        onChanged={(next) => {
          setChanged(next);
          setFlash(
            next.enabled
              ? 'Endpoint enabled: deliveries resume and the failure streak is 0.'
              : 'Endpoint disabled: events for it are now held, not sent.',
          );
        }}
        onDeleted={() => {
          noteDeleted(endpoint.url);
          navigate(href('endpoints'));
        }}
        onDeliveries={() => setLogGeneration((g) => g + 1)}
      />
      <p role="status" class="flash">
        {flash}
      </p>
      <section class="section" aria-labelledby="endpoint-overview-title">
        <SectionTitle section="overview" />
        <EndpointSummary endpoint={endpoint} />
        <HealthPanel endpointId={endpoint.endpointId} />
      </section>
      <section class="section" aria-labelledby="endpoint-deliveries-title">
        <SectionTitle section="deliveries" />
        <DeliveryLog key={`log-${logGeneration}`} endpointId={endpoint.endpointId} query={query} />
      </section>
      <Settings
        endpoint={endpoint}
        onSaved={(next) => {
          setChanged(next);
          setFlash('');
        }}
      />
      <section class="section" aria-labelledby="endpoint-options-title">
        <SectionTitle section="options" />
        <EndpointOptions endpoint={endpoint} onSaved={setChanged} />
      </section>
    </section>
  );
}

function EndpointSummary({ endpoint }: { endpoint: Endpoint }) {
  return (
    <div class="card">
      <dl class="summary">
        <dt>URL</dt>
        <dd class="mono">{endpoint.url}</dd>
        <dt>Description</dt>
        <dd>{endpoint.description ?? <span class="muted">None: the endpoint is named by its host</span>}</dd>
        <dt>Endpoint id</dt>
        <dd>
          <span class="mono">{endpoint.endpointId}</span> <CopyButton text={endpoint.endpointId} label="Copy endpoint id" />
        </dd>
        <dt>State</dt>
        <dd>
          <EnabledBadge enabled={endpoint.enabled} />
        </dd>
        <dt>Failure streak</dt>
        <dd>
          <Streak count={endpoint.consecutiveFailures} />{' '}
          <span class="muted">(consecutive failed attempts; {DISABLE_THRESHOLD} in a row disable the endpoint)</span>
        </dd>
        <dt>Success (24 h)</dt>
        <dd>{percent(endpoint.health.successRate24h)}</dd>
        <dt>Last attempt</dt>
        <dd>
          <Time iso={endpoint.health.lastAttemptAt} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={endpoint.createdAt} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time iso={endpoint.updatedAt} />
        </dd>
      </dl>
    </div>
  );
}

/** The settings form with webhook:write; the values, read-only, without. */
function Settings({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const canWrite = useCan('webhook:write', endpoint);
  const { portal, staff } = useSession();
  const embedded = portal !== null;
  return (
    <section class="section" aria-labelledby="endpoint-settings-title">
      <SectionTitle section="settings" />
      <div class="card">
        {canWrite ? (
          <EndpointForm endpoint={endpoint} onSaved={onSaved} />
        ) : (
          <>
            <dl class="summary">
              <dt>URL</dt>
              <dd class="mono">{endpoint.url}</dd>
              <dt>Description</dt>
              <dd>{endpoint.description ?? <span class="muted">—</span>}</dd>
              <dt>Event types</dt>
              <dd>
                <TypeChips types={endpoint.eventTypes} />
              </dd>
              <dt>Enabled</dt>
              <dd>{endpoint.enabled ? 'Yes' : 'No'}</dd>
            </dl>
            <p class="field-help">
              {embedded
                ? 'These settings can be viewed here but not changed.'
                : staff
                  ? `Your staff role (${staff.role}) can read the settings but not change them: that needs the write role.`
                  : 'This token can read the settings but not change them: that needs the webhook:write permission (write scope).'}
            </p>
          </>
        )}
      </div>
    </section>
  );
}
