/**
 * The console shell: sign-in (or a portal link's exchange, or the way back from the staff
 * identity provider and the workspace picker), then the navigation and the page the URL names.
 */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiClient, type ApiProblem } from './api/client';
import type { Overview, Permission } from './api/contract';
import { exchangePortalCode, takePortalCode } from './api/portal';
import { completeStaffSignIn, readOidcTag, StaffSignInError, takeStaffCallback, type StaffRefusal, type StaffSession } from './api/staff';
import type { StaffCallback } from './api/staff-protocol';
import { consolePermissions } from './console-permissions';
import { asProblem } from './components/load';
import { Loading, ProblemView } from './components/ui';
import type { Route } from './hash-route';
import { href, useRoute } from './router';
import { clearSession, loadSession, saveSession, SessionContext, type PortalSession, type Session, type StoredSession } from './session';
import { EmbeddedHeader, LinkUnusablePage, SessionExpiredPage, accentStyle } from './embedded';
import { SignInPage } from './pages/sign-in';
import { StaffIdentity, WorkspacePicker } from './pages/workspace-picker';
import { OverviewPage } from './pages/overview';
import { EndpointsPage } from './pages/endpoints';
import { NewEndpointPage } from './pages/new-endpoint';
import { EndpointPage } from './pages/endpoint';
import { DeliveriesPage } from './pages/deliveries';
import { DeliveryPage } from './pages/delivery';
import { EventTypesPage } from './pages/event-types';
import { TokensPage } from './pages/tokens';
import { AuditPage } from './pages/audit';
import { NotificationsPage } from './pages/notifications';
import { MembersPage } from './pages/members';

/**
 * The navigation's links, in order: their labels are their accessible names, which people's
 * automation relies on. A link whose page needs a permission the session lacks is left out (a
 * portal session never lists tokens or members).
 */
const NAV: readonly { label: string; path: string; needs?: Permission }[] = [
  { label: 'Overview', path: 'overview' },
  { label: 'Endpoints', path: 'endpoints' },
  { label: 'Deliveries', path: 'deliveries' },
  { label: 'Event types', path: 'event-types' },
  { label: 'API tokens', path: 'tokens', needs: 'token:list' },
  { label: 'Audit log', path: 'audit', needs: 'audit:list' },
  { label: 'Notifications', path: 'notifications', needs: 'notification:list' },
  { label: 'Members', path: 'members', needs: 'member:list' },
];

/** What a staff session whose hour is up, or that was ended, reads on the sign-in page. */
const STAFF_SESSION_ENDED = 'Your session ended; sign in again.';

type Boot =
  | { state: 'signed-out'; reason?: string | undefined; refusal?: StaffRefusal }
  | { state: 'exchanging'; code: string; problem?: ApiProblem }
  | { state: 'staff-signing-in'; callback: StaffCallback }
  | { state: 'picking'; stored: StoredSession; notice?: string; current?: string }
  | { state: 'link-unusable' }
  | { state: 'expired'; portal: PortalSession }
  | { state: 'checking'; stored: StoredSession }
  | { state: 'signed-in'; stored: StoredSession; overview: Overview };

/** A failure worth another try as it is: no answer, rate limited, or a server error. */
const retryable = (problem: ApiProblem) => problem.status === 0 || problem.status === 429 || problem.status >= 500;

/** True when a staff session's hour is up. */
const staffEnded = (staff: StaffSession) => !(Date.parse(staff.expiresAt) > Date.now());

/** The whole console. */
export function App() {
  // The stage's identity provider, when it offers staff sign-in (read once: the page does not change).
  const oidc = useMemo(() => readOidcTag(), []);
  const [boot, setBoot] = useState<Boot>(() => {
    // A portal link's code wins over a stored session: the platform opened a new one.
    const code = takePortalCode();
    if (code) return { state: 'exchanging', code };
    // So does the provider's answer to a staff sign-in (taken out of the address even when staff sign-in is off).
    const callback = takeStaffCallback();
    if (callback && oidc) return { state: 'staff-signing-in', callback };
    const stored = loadSession();
    if (stored?.staff && staffEnded(stored.staff)) {
      clearSession();
      return { state: 'signed-out', reason: STAFF_SESSION_ENDED };
    }
    if (stored?.staff && !stored.slug) return { state: 'picking', stored };
    return stored ? { state: 'checking', stored } : { state: 'signed-out' };
  });
  const [bootProblem, setBootProblem] = useState<ApiProblem | null>(null);

  const stored = boot.state === 'checking' || boot.state === 'signed-in' || boot.state === 'picking' ? boot.stored : null;

  const signOut = useCallback(
    (reason?: string) => {
      const staff = stored?.staff;
      clearSession();
      setBoot({ state: 'signed-out', reason });
      // The person's own sign-out ends a staff session at the API too; the tab forgets it whatever the answer.
      if (staff && stored && reason === undefined)
        void new ApiClient('', stored.token)
          .call('revokeConsoleSession', { params: { sessionId: staff.sessionId } })
          .catch(() => undefined);
    },
    [stored],
  );

  /** A portal session ends on its own: the embedded console never shows the operators' sign-in. */
  const expire = useCallback((portal: PortalSession) => {
    clearSession();
    setBoot({ state: 'expired', portal });
  }, []);

  const client = useMemo(
    () =>
      stored
        ? new ApiClient(stored.slug, stored.token, (problem) =>
            stored.portal ? expire(stored.portal) : signOut(stored.staff ? STAFF_SESSION_ENDED : `Your session ended: ${problem.detail}`),
          )
        : null,
    // A new client only when the credentials change.
    [stored],
  );

  useEffect(() => {
    if (boot.state !== 'staff-signing-in' || !oidc) return;
    completeStaffSignIn(oidc, boot.callback).then(
      (answer) => {
        const { token, ...staff } = answer;
        const session: StoredSession = { slug: '', token, staff };
        saveSession(session);
        setBoot({ state: 'picking', stored: session });
      },
      (e: unknown) => {
        if (e instanceof StaffSignInError) setBoot({ state: 'signed-out', refusal: e.refusal });
        else setBoot({ state: 'signed-out', refusal: { kind: 'api', problem: asProblem(e) } });
      },
    );
  }, [boot, oidc]);

  useEffect(() => {
    if (boot.state !== 'exchanging' || boot.problem) return;
    exchangePortalCode(boot.code).then(
      (answer) => {
        const { token, workspace, ...portal } = answer;
        const session: StoredSession = { slug: workspace, token, portal };
        saveSession(session);
        setBoot({ state: 'checking', stored: session });
      },
      (e: unknown) => {
        const problem = asProblem(e);
        setBoot(retryable(problem) ? { state: 'exchanging', code: boot.code, problem } : { state: 'link-unusable' });
      },
    );
  }, [boot]);

  useEffect(() => {
    if (boot.state !== 'checking' || !client) return;
    setBootProblem(null);
    client.call('getWorkspaceOverview').then(
      (overview) => setBoot({ state: 'signed-in', stored: boot.stored, overview }),
      (e: unknown) => {
        const problem = asProblem(e);
        if (boot.stored.portal && (problem.status === 401 || problem.status === 404)) expire(boot.stored.portal);
        else if (boot.stored.staff && problem.status === 404) {
          // The workspace went away (erased, or a stale address): back to the picker, still signed in.
          const back: StoredSession = { ...boot.stored, slug: '' };
          saveSession(back);
          setBoot({ state: 'picking', stored: back, notice: `Workspace “${boot.stored.slug}” was not found: choose another.` });
        } else if (boot.stored.staff && problem.status === 401) signOut(STAFF_SESSION_ENDED);
        else if (problem.status === 401 || problem.status === 404)
          signOut(
            problem.status === 404
              ? `Workspace “${boot.stored.slug}” was not found for this token.`
              : `Your session ended: ${problem.detail}`,
          );
        else setBootProblem(problem);
      },
    );
  }, [boot, client, signOut, expire]);

  // A staff session ends after its hour, whether or not the page calls the API then.
  const staffExpiresAt = stored?.staff?.expiresAt;
  useEffect(() => {
    if (!staffExpiresAt) return;
    const left = Date.parse(staffExpiresAt) - Date.now();
    const end = () => {
      clearSession();
      setBoot({ state: 'signed-out', reason: STAFF_SESSION_ENDED });
    };
    if (!(left > 0)) {
      end();
      return;
    }
    const timer = setTimeout(end, Math.min(left, 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [staffExpiresAt]);

  const pick = useCallback((from: StoredSession, slug: string) => {
    const next: StoredSession = { ...from, slug };
    saveSession(next);
    // A new workspace starts at its overview: an address of the last one names its endpoints and deliveries.
    history.replaceState(null, '', `${location.pathname}${location.search}#/overview`);
    setBoot({ state: 'checking', stored: next });
  }, []);

  const switchWorkspace = useCallback(() => {
    if (!stored?.staff) return;
    const back: StoredSession = { ...stored, slug: '' };
    saveSession(back);
    setBoot({ state: 'picking', stored: back, current: stored.slug });
  }, [stored]);

  // A portal session also ends when its time is up, whether or not the page calls the API then.
  const portal = stored?.portal;
  useEffect(() => {
    if (!portal) return;
    const left = Date.parse(portal.expiresAt) - Date.now();
    if (!(left > 0)) {
      expire(portal);
      return;
    }
    // setTimeout takes at most 2^31-1 ms (about 24.8 days); sessions are far shorter.
    const timer = setTimeout(() => expire(portal), Math.min(left, 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [portal, expire]);

  const signIn = useCallback(async (candidate: StoredSession): Promise<ApiProblem | null> => {
    const probe = new ApiClient(candidate.slug, candidate.token);
    try {
      const overview = await probe.call('getWorkspaceOverview');
      saveSession(candidate);
      setBoot({ state: 'signed-in', stored: candidate, overview });
      return null;
    } catch (e) {
      return asProblem(e);
    }
  }, []);

  if (boot.state === 'signed-out') return <SignInPage reason={boot.reason} oidc={oidc} refusal={boot.refusal} onSignIn={signIn} />;
  if (boot.state === 'staff-signing-in') {
    return (
      <main class="boot-main" id="main">
        <Loading label="Signing you in…" />
      </main>
    );
  }
  if (boot.state === 'picking' && client && boot.stored.staff) {
    const from = boot.stored;
    return (
      <WorkspacePicker
        client={client}
        staff={boot.stored.staff}
        notice={boot.notice}
        current={boot.current}
        onPick={(slug) => pick(from, slug)}
        onSignOut={() => signOut()}
      />
    );
  }
  if (boot.state === 'link-unusable') return <LinkUnusablePage />;
  if (boot.state === 'expired') return <SessionExpiredPage portal={boot.portal} />;
  if (boot.state === 'exchanging') {
    return (
      <main class="boot-main" id="main">
        {boot.problem ? (
          <>
            {/* Says what failed: the platform's page opened this frame, not the person. */}
            <h1>The webhooks console could not be opened</h1>
            <ProblemView problem={boot.problem} onRetry={() => setBoot({ state: 'exchanging', code: boot.code })} />
          </>
        ) : (
          <Loading label="Opening the console…" />
        )}
      </main>
    );
  }
  if (boot.state === 'checking' || boot.state === 'picking' || !client) {
    return (
      <main class="boot-main" id="main">
        {bootProblem ? (
          <ProblemView problem={bootProblem} onRetry={() => setBoot({ ...boot })} />
        ) : (
          <Loading label={boot.stored.portal ? 'Opening the console…' : boot.stored.staff ? 'Opening the workspace…' : 'Signing in…'} />
        )}
      </main>
    );
  }
  const session: Session = {
    slug: boot.stored.slug,
    client,
    permissions: consolePermissions(boot.overview.caller.permissions, boot.stored.portal, boot.stored.staff),
    caller: boot.overview.caller,
    workspaceName: boot.overview.workspace.name,
    portal: boot.stored.portal ?? null,
    staff: boot.stored.staff ?? null,
    signOut,
    switchWorkspace,
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

function Shell({ session }: { session: Session }) {
  const route = useRoute();
  const section = route.segments[0] ?? 'overview';
  const accent = accentStyle(session.portal);
  const nav = NAV.filter((item) => !item.needs || session.permissions.has(item.needs));
  return (
    <div class={session.portal ? 'shell shell-embedded' : 'shell'} style={accent}>
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      {session.portal ? (
        <EmbeddedHeader portal={session.portal} slug={session.slug} />
      ) : (
        <header class={session.staff ? 'topbar topbar-staff' : 'topbar'}>
          <span class="brand">Webhooks</span>
          <span class="workspace" title={session.slug}>
            {session.workspaceName} <span class="muted">({session.slug})</span>
          </span>
          {session.staff ? (
            <>
              <StaffIdentity staff={session.staff} />
              <button type="button" class="button button-quiet" onClick={() => session.switchWorkspace()}>
                Switch workspace
              </button>
            </>
          ) : null}
          <button type="button" class="button button-quiet" onClick={() => session.signOut()}>
            Sign out
          </button>
        </header>
      )}
      <nav class="sidenav" aria-label="Console">
        <ul>
          {nav.map((item) => (
            <li key={item.path}>
              <a href={href(item.path)} aria-current={section === item.path ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main class="content" id="main" tabIndex={-1}>
        <Page route={route} permissions={session.permissions} />
      </main>
    </div>
  );
}

function Page({ route, permissions }: { route: Route; permissions: ReadonlySet<Permission> }) {
  if (route.malformed) return <PageNotFound />;
  const [section = 'overview', id] = route.segments;
  // A page the session may not open is not there for it, as its link is not.
  const needs = NAV.find((item) => item.path === section)?.needs;
  if (needs && !permissions.has(needs)) return <PageNotFound />;
  switch (section) {
    case 'overview':
      return <OverviewPage />;
    case 'endpoints':
      if (id === 'new') return <NewEndpointPage />;
      return id ? <EndpointPage key={id} endpointId={id} query={route.query} /> : <EndpointsPage />;
    case 'deliveries':
      return id ? <DeliveryPage key={id} deliveryId={id} /> : <DeliveriesPage query={route.query} />;
    case 'event-types':
      return <EventTypesPage />;
    case 'tokens':
      return <TokensPage />;
    case 'audit':
      return <AuditPage />;
    case 'notifications':
      return <NotificationsPage query={route.query} />;
    case 'members':
      return <MembersPage />;
    default:
      return <PageNotFound />;
  }
}

function PageNotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no console page at this address. <a href={href('overview')}>Go to the overview</a>.
      </p>
    </section>
  );
}
