/** API tokens: the list, a new token (shown once) and revoking one (docs/behaviour.md#token-rules). */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiToken } from '../api/contract';
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable, type Column } from '../components/workspace-paged-table';
import { NewTokenDialog, RevokeTokenDialog } from '../components/workspace-token-dialogs';
import { useCan, useSession } from '../session';
import '../styles/workspace.css';

/**
 * Who created a token, as the workspace is shown it: a token by its name, a portal session, the
 * platform (its API or the admin CLI), or "Platform staff" (never which person: that is in the audit log).
 */
function CreatedBy({ actor }: { actor: ApiToken['createdBy'] }) {
  if (!actor) return <span class="muted">—</span>;
  if (actor.kind === 'staff') return <>Platform staff</>;
  if (actor.kind === 'system') return <>The platform</>;
  if (actor.kind === 'portal_session') return <>Portal session</>;
  return actor.name ? <span title={actor.id}>{actor.name}</span> : <span class="mono">{actor.id}</span>;
}

/** The API tokens page. */
export function TokensPage() {
  const { client, caller, staff } = useSession();
  const canWrite = useCan('token:write');
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const revokedRef = useRef<HTMLParagraphElement>(null);
  // The revoked row's button (where the dialog would return focus) is gone: focus the outcome.
  useEffect(() => {
    if (revoked) revokedRef.current?.focus();
  }, [revoked]);
  const paged = usePaged((cursor) => client.call('listApiTokens', { query: { cursor, limit: PAGE_SIZE } }), [client]);

  const columns: Column<ApiToken>[] = [
    {
      label: 'Name',
      class: 'wrap',
      cell: (token) => (
        <>
          {token.name}
          {token.tokenId === caller.tokenId ? (
            <>
              {' '}
              <span class="badge badge-pending">Signed in with this token</span>
            </>
          ) : null}
        </>
      ),
    },
    { label: 'Token id', class: 'mono', cell: (token) => token.tokenId },
    {
      label: 'Scopes',
      cell: (token) => (
        <ul class="ws-chips">
          {token.scopes.map((s) => (
            <li key={s} class="mono">
              {s}
            </li>
          ))}
        </ul>
      ),
    },
    { label: 'Created', cell: (token) => <Time iso={token.createdAt} /> },
    { label: 'Created by', class: 'wrap', cell: (token) => <CreatedBy actor={token.createdBy} /> },
  ];
  if (canWrite) {
    columns.push({
      label: 'Actions',
      cell: (token) => (
        <button type="button" class="button button-small" onClick={() => setRevoking(token)}>
          Revoke
        </button>
      ),
    });
  }

  return (
    <section>
      <PageHeader title="API tokens">
        {canWrite ? (
          <button
            type="button"
            class="button button-primary"
            onClick={() => {
              setRevoked(null);
              setCreating(true);
            }}
          >
            New token
          </button>
        ) : null}
      </PageHeader>
      <p class="muted ws-lead">
        Clients send a token in the <span class="mono">Authorization: Bearer</span> header to call the REST API and the MCP server. A token
        is shown once, when it is created; this list never shows it again.
        {canWrite
          ? null
          : staff
            ? ` Your staff role (${staff.role}) may not create or revoke tokens.`
            : ' Your token may not create or revoke tokens.'}
      </p>
      {revoked ? (
        <p class="success ws-outcome" role="status" tabIndex={-1} ref={revokedRef}>
          Token “{revoked}” was revoked.
        </p>
      ) : null}
      <PagedTable
        paged={paged}
        caption="API tokens"
        columns={columns}
        loadingLabel="Loading API tokens…"
        emptyTitle="No API tokens"
        emptyNext={canWrite ? 'Create one with “New token”.' : 'Ask a workspace admin to create one.'}
        rowKey={(token) => token.tokenId}
      />
      {creating ? <NewTokenDialog onClose={() => setCreating(false)} onCreated={() => paged.reload()} /> : null}
      {revoking ? (
        <RevokeTokenDialog
          token={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={() => {
            setRevoked(revoking.name);
            setRevoking(null);
            paged.reload();
          }}
        />
      ) : null}
    </section>
  );
}
