/**
 * Sign-in: platform staff with the stage's identity provider (when the page names one), or a
 * workspace slug and API token; either way the token stays in this tab's sessionStorage.
 */
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import { startStaffSignIn, type StaffRefusal } from '../api/staff';
import type { ConsoleOidcTag } from '../api/staff-protocol';
import { asProblem } from '../components/load';
import { ProblemView } from '../components/ui';
import type { StoredSession } from '../session';
import '../styles/staff.css';

/** A staff sign-in that did not end in a session, in words a person understands. */
function Refusal({ refusal, provider, onRetry }: { refusal: StaffRefusal; provider: string; onRetry: () => void }) {
  let title: string;
  let detail: string;
  let more: string | null = null;
  if (refusal.kind === 'api' && refusal.problem.tag === 'NoConsoleAccess') {
    return (
      <div class="problem" role="alert">
        <p class="problem-title">No access to this console</p>
        <p class="problem-detail">Your account has no access to this console: ask for one of its groups.</p>
        <p class="problem-hint">
          {provider} signed you in, but none of your groups there is one this console gives a role to (read, write or admin). Once a
          platform admin adds you to one, sign in again.
        </p>
      </div>
    );
  }
  if (refusal.kind === 'api' && refusal.problem.tag !== 'InvalidIdToken')
    return <ProblemView problem={refusal.problem} onRetry={onRetry} />;
  if (refusal.kind === 'api') {
    title = 'The console could not verify your sign-in';
    detail = refusal.problem.detail;
    more = `Nothing was signed in. Try again; if it happens again, tell the platform team what it says${refusal.problem.traceId ? ` and the trace id ${refusal.problem.traceId}` : ''}.`;
  } else if (refusal.kind === 'provider' && refusal.error === 'access_denied') {
    title = `${provider} did not sign you in`;
    detail = `The sign-in was cancelled at ${provider}, or ${provider} refused it${refusal.description ? ` (“${refusal.description}”)` : ''}.`;
    more = 'Nothing was signed in. Try again, or sign in with an API token below.';
  } else if (refusal.kind === 'provider') {
    title = `${provider} could not sign you in`;
    detail = `${provider} answered “${refusal.error}”${refusal.description ? `: ${refusal.description}` : ''}.`;
  } else if (refusal.kind === 'state-mismatch') {
    title = 'This sign-in could not be completed';
    detail = `The answer from ${provider} does not belong to a sign-in started in this tab: it may be an old link, or from another tab.`;
    more = 'Nothing was signed in. Start again from here.';
  } else {
    title = 'This sign-in could not be completed';
    detail = refusal.detail;
  }
  return (
    <div class="problem" role="alert">
      <p class="problem-title">{title}</p>
      <p class="problem-detail">{detail}</p>
      {more ? <p class="problem-hint">{more}</p> : null}
      <button type="button" class="button" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}

/** The staff part of the sign-in page: the provider's button, and why the last attempt failed. */
function StaffSignIn({ oidc, refusal }: { oidc: ConsoleOidcTag; refusal: StaffRefusal | undefined }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  // Shown until the person starts again.
  const [shownRefusal, setShownRefusal] = useState(refusal);
  const start = () => {
    setBusy(true);
    setProblem(null);
    setShownRefusal(undefined);
    startStaffSignIn(oidc).then(
      (url) => location.assign(url),
      (e: unknown) => {
        setBusy(false);
        setProblem(asProblem(e));
      },
    );
  };
  return (
    <section class="sign-in-staff" aria-labelledby="staff-title">
      <h2 id="staff-title">Platform staff</h2>
      <p class="muted">Sign in with your company account; your groups there decide what you may do in every workspace.</p>
      {shownRefusal ? <Refusal refusal={shownRefusal} provider={oidc.name} onRetry={start} /> : null}
      {problem ? <ProblemView problem={problem} onRetry={start} /> : null}
      <button type="button" class="button button-primary sign-in-provider" onClick={start} disabled={busy}>
        Sign in with {oidc.name}
      </button>
      {busy ? (
        <p class="muted" role="status">
          Taking you to {oidc.name}…
        </p>
      ) : null}
    </section>
  );
}

/**
 * The sign-in page; `reason` says why the user is here again (a 401, a sign-out); `oidc`, when
 * the stage has staff sign-in, offers it first; `refusal` is why the last staff sign-in failed.
 */
export function SignInPage({
  reason,
  oidc,
  refusal,
  onSignIn,
}: {
  reason?: string | undefined;
  oidc?: ConsoleOidcTag | null;
  refusal?: StaffRefusal | undefined;
  onSignIn: (session: StoredSession) => Promise<ApiProblem | null>;
}) {
  const [slug, setSlug] = useState('');
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const failed = await onSignIn({ slug: slug.trim(), token: token.trim() });
    setBusy(false);
    if (failed) setProblem(failed);
  };
  const fields = (
    <>
      <label class="field">
        <span class="field-label">Workspace</span>
        <input
          name="workspace"
          autoComplete="username"
          required
          value={slug}
          onInput={(e) => setSlug(e.currentTarget.value)}
          spellcheck={false}
        />
      </label>
      <label class="field">
        <span class="field-label">API token</span>
        <input
          name="token"
          type="password"
          autoComplete="current-password"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          spellcheck={false}
        />
      </label>
      {problem ? (
        <ProblemView
          problem={
            problem.status === 404
              ? Object.assign(Object.create(Object.getPrototypeOf(problem) as object) as ApiProblem, problem, {
                  title: 'Workspace not found',
                  detail: `No workspace “${slug.trim()}” for this token. Check the slug.`,
                })
              : problem
          }
        />
      ) : null}
      <button type="submit" class="button button-primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </>
  );
  const tokenHelp =
    'Use your workspace slug and an API token. The token is kept in this browser tab only and is forgotten when you sign out or close the tab.';
  const notice = reason ? (
    <p class="notice" role="status">
      {reason}
    </p>
  ) : null;
  if (oidc) {
    return (
      <main class="sign-in" id="main">
        <div class="card sign-in-card sign-in-choice">
          <h1>Sign in to the webhooks console</h1>
          {notice}
          <StaffSignIn oidc={oidc} refusal={refusal} />
          <p class="sign-in-or" aria-hidden="true">
            <span>or</span>
          </p>
          <form class="sign-in-token" onSubmit={(e) => void submit(e)} aria-labelledby="token-title" aria-describedby="sign-in-help">
            <h2 id="token-title">Sign in with an API token</h2>
            <p id="sign-in-help" class="muted">
              {tokenHelp}
            </p>
            {fields}
          </form>
        </div>
      </main>
    );
  }
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={(e) => void submit(e)} aria-describedby="sign-in-help">
        <h1>Sign in to the webhooks console</h1>
        <p id="sign-in-help" class="muted">
          {tokenHelp}
        </p>
        {notice}
        {fields}
      </form>
    </main>
  );
}
