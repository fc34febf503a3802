/** The audit log: who changed what, newest first, as a paged list. */
import type { AuditEvent } from '../api/contract';
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
function Target({ event }: { event: AuditEvent }) {
  const id = event.targetId;
  if (id.startsWith('whd_')) {
    return (
      <a class="mono" href={href(`deliveries/${id}`)}>
        {id}
      </a>
    );
  }
  if (id.startsWith('whe_') && event.action !== 'webhook.deleted') {
    return (
      <a class="mono" href={href(`endpoints/${id}`)}>
        {id}
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

/** The audit log page. */
export function AuditPage() {
  const { client, caller } = useSession();
  const columns: readonly Column<AuditEvent>[] = [
    { label: 'Time', cell: (event) => <Time iso={event.createdAt} /> },
    { label: 'Action', class: 'mono', cell: (event) => event.action },
    {
      label: 'Actor',
      cell: (event) =>
        event.actor === 'system' ? (
          'System'
        ) : (
          <>
            <span class="mono">{event.actor}</span>
            {event.actor === caller.tokenId ? <span class="muted"> (your token)</span> : null}
          </>
        ),
    },
    { label: 'Target', cell: (event) => <Target event={event} /> },
    { label: 'Detail', class: 'wrap', cell: (event) => <Detail detail={event.detail} /> },
  ];
  const paged = usePaged((cursor) => client.call('listAuditEvents', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Audit log" />
      <p class="muted ws-lead">
        Every change to endpoints, secrets, tokens and recoveries, newest first. The actor is the API token that made it, or the service
        itself.
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
