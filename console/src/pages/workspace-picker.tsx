/**
 * The workspace picker of a staff session (docs/behaviour.md#staff-sign-in): the workspaces
 * `GET /workspaces` lists (every one, in slug order, a page at a time), a search box over the
 * ones loaded, and one button per workspace named by its name and slug. The keyboard alone
 * works: the search box has focus, Enter opens the first match, the arrow keys move between
 * workspaces.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../api/client';
import type { ItemOf } from '../api/contract';
import type { StaffSession } from '../api/staff';
import { usePaged } from '../components/load';
import { Empty, LoadMore, Loading, ProblemView } from '../components/ui';
import '../styles/staff.css';

type Workspace = ItemOf<'listWorkspaces'>;

/** Workspaces per page of `GET /workspaces` (its most). */
const PICKER_PAGE_SIZE = 100;

/** True when `query` (any case, any spacing) is in the workspace's name or slug. */
function matches(workspace: Workspace, query: string): boolean {
  const q = query.trim().toLowerCase();
  return !q || workspace.name.toLowerCase().includes(q) || workspace.slug.includes(q);
}

/** Moves focus to the previous or next workspace button with the arrow keys (Home and End to the ends). */
function onListKey(e: KeyboardEvent) {
  const buttons = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLButtonElement>('button.picker-item')];
  const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
  const to =
    e.key === 'ArrowDown' ? at + 1 : e.key === 'ArrowUp' ? at - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? buttons.length - 1 : null;
  if (to === null || at < 0) return;
  e.preventDefault();
  buttons[Math.max(0, Math.min(buttons.length - 1, to))]?.focus();
}

/** The picker page; `notice` says why the person is here again (a workspace that no longer exists). */
export function WorkspacePicker({
  client,
  staff,
  notice,
  current,
  onPick,
  onSignOut,
}: {
  client: ApiClient;
  staff: StaffSession;
  notice?: string | undefined;
  /** The workspace the person is switching from, if any (offered to go back to). */
  current?: string | undefined;
  onPick: (slug: string) => void;
  onSignOut: () => void;
}) {
  const [query, setQuery] = useState('');
  const paged = usePaged((cursor) => client.call('listWorkspaces', { query: { cursor, limit: PICKER_PAGE_SIZE } }), [client]);
  const search = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  useEffect(() => {
    document.title = 'Choose a workspace · Webhooks console';
    search.current?.focus();
  }, []);
  const shown = paged.items.filter((w) => matches(w, query));
  const onSearchKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && shown[0]) {
      e.preventDefault();
      onPick(shown[0].slug);
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      list.current?.querySelector<HTMLButtonElement>('button.picker-item')?.focus();
    }
  };
  return (
    <div class="shell-picker">
      <header class="topbar topbar-staff">
        <span class="brand">Webhooks</span>
        <span class="workspace" />
        <StaffIdentity staff={staff} />
        <button type="button" class="button button-quiet" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main class="picker" id="main">
        <section class="card picker-card" aria-labelledby="picker-title">
          <h1 id="picker-title">Choose a workspace</h1>
          <p class="muted">
            As platform staff with the <strong>{staff.role}</strong> role you can open every workspace. What you change is recorded in the
            workspace's audit log under your email.
          </p>
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          <label class="field">
            <span class="field-label">Find a workspace</span>
            <input
              ref={search}
              type="search"
              value={query}
              onInput={(e) => setQuery(e.currentTarget.value)}
              onKeyDown={onSearchKey}
              spellcheck={false}
              autoComplete="off"
              aria-describedby="picker-search-help"
            />
            <span id="picker-search-help" class="field-help">
              By name or slug. Enter opens the first match; the arrow keys move through the list.
            </span>
          </label>
          {paged.state === 'loading' ? <Loading label="Loading workspaces…" /> : null}
          {paged.state === 'error' && paged.problem ? <ProblemView problem={paged.problem} onRetry={paged.reload} /> : null}
          {paged.state === 'ready' && paged.items.length === 0 ? (
            <Empty title="There are no workspaces yet">Workspaces are created by the platform (its API or the admin CLI).</Empty>
          ) : null}
          {paged.state === 'ready' && paged.items.length > 0 && shown.length === 0 ? (
            <Empty title={`No workspace matches “${query.trim()}”`}>
              {paged.hasMore
                ? 'Only the workspaces loaded so far were searched: load more below.'
                : 'Check the spelling, or search by slug.'}
            </Empty>
          ) : null}
          {shown.length > 0 ? (
            <ul class="picker-list" ref={list} onKeyDown={onListKey} aria-label="Workspaces">
              {shown.map((w) => (
                <li key={w.slug}>
                  <button
                    type="button"
                    class="picker-item"
                    aria-current={w.slug === current ? 'true' : undefined}
                    onClick={() => onPick(w.slug)}
                  >
                    <span class="picker-name">{w.name}</span> <span class="mono muted picker-slug">{w.slug}</span>
                    {/* aria-current says it to screen readers; the button keeps its name "<name> <slug>". */}
                    {w.slug === current ? (
                      <span class="badge badge-pending picker-current" aria-hidden="true">
                        Open now
                      </span>
                    ) : null}
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
          {paged.state === 'ready' && paged.problem ? <ProblemView problem={paged.problem} /> : null}
          <LoadMore hasMore={paged.hasMore} loading={paged.loadingMore} onLoad={paged.loadMore} label="Load more workspaces" />
          <p class="muted picker-count" role="status">
            {paged.state === 'ready' && paged.items.length > 0
              ? `${shown.length} of ${paged.items.length}${paged.hasMore ? '+' : ''} workspaces shown`
              : ''}
          </p>
        </section>
      </main>
    </div>
  );
}

/** Who is signed in, in the header of a staff session: the email and the role. */
export function StaffIdentity({ staff }: { staff: StaffSession }) {
  return (
    <span class="staff-identity" title={`Signed in as ${staff.email}, platform staff, ${staff.role} role`}>
      <span class="staff-email">{staff.email}</span> <span class="badge badge-staff">Staff · {staff.role}</span>
    </span>
  );
}
