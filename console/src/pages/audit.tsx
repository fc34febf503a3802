/**
 * The audit log: who changed what, newest first, as a paged list. The actor is named as the
 * entry recorded it (a token's name, kept even after the token is revoked), else by its id;
 * endpoints by their label (description, else host) while they exist.
 */
import { useMemo } from 'preact/hooks';
import type { AuditEvent } from '../api/contract';
import { endpointLabels, useEndpointDirectory } from '../components/delivery-parts';
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable, type Column } from '../components/workspace-paged-table';
import { href } from '../router';
import { useSession } from '../session';
import '../styles/workspace.css';

/** A detail value as compact text: lists joined by commas, objects as JSON. */
function compact(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return value.map(String).join(',');
  return JSON.stringify(value) ?? String(value);
}

/** The event's target, linked when the console has a page for it (a deleted endpoint has none). */
function Target({ event, labels }: { event: AuditEvent; labels: ReadonlyMap<string, string> }) {
  const id = event.targetId;
  if (id.startsWith('whd_')) {
    return (
      <a class="mono" href={href(`deliveries/${id}`)}>
        {id}
      </a>
    );
  }
  if (id.startsWith('whe_') && event.action !== 'webhook.deleted') {
    const label = labels.get(id);
    return (
      <a class={label ? undefined : 'mono'} href={href(`endpoints/${id}`)} title={id}>
        {label ?? id}
      </a>
    );
  }
  return <span class="mono">{id}</span>;
}

/** The detail as compact `key=value` lines. */
function Detail({ detail }: { detail: AuditEvent['detail'] }) {
  const entries = Object.entries(detail);
  if (entries.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="ws-kv">
      {entries.map(([key, value]) => (
        <li key={key}>
          <code>
            {key}={compact(value)}
          </code>
        </li>
      ))}
    </ul>
  );
}

/**
 * Who made the change: the token's name (its id beside it), a platform staff member by email
 * ("<email> (platform staff)"), a portal session, or the service itself.
 */
function Actor({ event, callerTokenId }: { event: AuditEvent; callerTokenId: string }) {
  const { actor } = event;
  if (actor.kind === 'system') return <>System</>;
  const mine = actor.id === callerTokenId;
  if (actor.kind === 'staff') {
    return (
      <span class="ws-actor" title={actor.id}>
        {actor.email ? <span>{actor.email} (platform staff)</span> : <span>Platform staff</span>}
        {mine ? <span class="muted"> (you)</span> : null}
      </span>
    );
  }
  const name = actor.name ?? actor.email;
  return (
    <span class="ws-actor">
      {name ? <span>{name}</span> : <span class="mono">{actor.id}</span>}
      {name ? <span class="mono muted ws-actor-id">{actor.id}</span> : null}
      {actor.kind === 'portal_session' ? <span class="muted"> (Portal session)</span> : null}
      {mine ? <span class="muted"> (your token)</span> : null}
    </span>
  );
}

/** The audit log page. */
export function AuditPage() {
  const { client, caller } = useSession();
  const paged = usePaged((cursor) => client.call('listAuditEvents', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  const directory = useEndpointDirectory(paged.items.some((e) => e.targetId.startsWith('whe_')));
  const labels = useMemo(() => endpointLabels(directory.data ?? []), [directory.data]);
  const columns: readonly Column<AuditEvent>[] = [
    { label: 'Time', cell: (event) => <Time iso={event.createdAt} /> },
    { label: 'Action', class: 'mono', cell: (event) => event.action },
    { label: 'Actor', cell: (event) => <Actor event={event} callerTokenId={caller.tokenId} /> },
    { label: 'Target', cell: (event) => <Target event={event} labels={labels} /> },
    { label: 'Detail', class: 'wrap', cell: (event) => <Detail detail={event.detail} /> },
  ];
  return (
    <section>
      <PageHeader title="Audit log" />
      <p class="muted ws-lead">
        Every change to endpoints, secrets, tokens and recoveries, newest first. The actor is the API token that made it (by its name), a
        platform staff member (by email), or the service itself.
      </p>
      <PagedTable
        paged={paged}
        caption="Audit log"
        columns={columns}
        rowKey={(event) => event.auditEventId}
        loadingLabel="Loading the audit log…"
        emptyTitle="Nothing has been changed yet"
        emptyNext={
          <>
            Changes appear here as they happen: start by <a href={href('endpoints')}>adding an endpoint</a>.
          </>
        }
      />
    </section>
  );
}
