/**
 * Creating and revoking API tokens (docs/behaviour.md#token-rules). A new token's scopes must
 * grant nothing beyond the caller's (the API answers 403 listing `excessPermissions`), so only
 * the bundles the caller's token fully holds are offered. The raw token is shown once and
 * forgotten when the dialog closes.
 */
import { useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { ApiToken, CreatedApiToken, Permission } from '../api/contract';
import { SCOPE_BUNDLES } from '../../../lambdas/contract/permissions';
import { useSession } from '../session';
import { asProblem } from './load';
import { ShownOnceDialog } from './shown-once';
import { ConfirmDialog } from './confirm-dialog';
import { plural } from '../plural';

type Bundle = keyof typeof SCOPE_BUNDLES;

/** What each scope bundle lets a token do, beside the permissions it grants. */
const BUNDLES: Record<Bundle, { permissions: readonly Permission[]; help: string }> = {
  read: {
    permissions: SCOPE_BUNDLES.read,
    help: 'See endpoints, deliveries, event types, tokens, members, the audit log and notifications.',
  },
  write: {
    permissions: SCOPE_BUNDLES.write,
    help: 'Also create, change and delete endpoints, rotate secrets, send test events, replay and recover deliveries.',
  },
  admin: { permissions: SCOPE_BUNDLES.admin, help: 'Also create and revoke API tokens.' },
};

/** The authorizer cache TTL (docs/behaviour.md#limits: 60 s by default): how long REST may still accept a revoked token. */
const AUTHORIZER_CACHE_SECONDS = 60;

/** The "New token" dialog: name and scopes, then the raw token once. */
export function NewTokenDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const { client, permissions } = useSession();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ReadonlySet<Bundle>>(new Set());
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [errors, setErrors] = useState<{ name?: string; scopes?: string }>({});
  const [created, setCreated] = useState<CreatedApiToken | null>(null);
  const nameRef = useRef<HTMLInputElement>(null);
  const grantable = (bundle: Bundle) => BUNDLES[bundle].permissions.every((p) => permissions.has(p));

  const submit = async () => {
    const trimmed = name.trim();
    const next = {
      name: trimmed ? undefined : 'Give the token a name, e.g. the client that will use it.',
      scopes: scopes.size ? undefined : 'Choose at least one scope.',
    };
    setErrors(next);
    setProblem(null);
    if (next.name || next.scopes) {
      if (next.name) nameRef.current?.focus();
      return;
    }
    setBusy(true);
    try {
      const token = await client.call('createApiToken', { body: { name: trimmed, scopes: [...scopes] } });
      setCreated(token);
      onCreated();
    } catch (err) {
      const p = asProblem(err);
      // Validation issues go on the field they concern; anything else is shown whole.
      const onName = p.issues.find((i) => i.path === 'name' || i.path.startsWith('name.'));
      const onScopes = p.issues.find((i) => i.path === 'scopes' || i.path.startsWith('scopes.'));
      if (onName || onScopes) setErrors({ name: onName?.message, scopes: onScopes?.message });
      else setProblem(p);
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <ShownOnceDialog
        title="API token created"
        label="New API token"
        value={created.token}
        copyLabel="Copy token"
        advice="Only its hash is stored; if it is lost, create a new one and revoke this one."
        onClose={onClose}
      >
        <p class="muted">
          <strong>{created.name}</strong> ({created.tokenId}), scopes {created.scopes.join(', ')}.
        </p>
      </ShownOnceDialog>
    );
  }

  return (
    <ConfirmDialog
      title="New API token"
      onClose={onClose}
      problem={problem}
      form
      confirm={{ label: busy ? 'Creating…' : 'Create token', tone: 'primary', onConfirm: () => void submit(), disabled: busy }}
    >
      <div class="field">
        <label class="field-label" for="token-name">
          Name
        </label>
        <input
          id="token-name"
          ref={nameRef}
          type="text"
          value={name}
          maxLength={100}
          autoComplete="off"
          aria-invalid={errors.name ? 'true' : undefined}
          aria-describedby={errors.name ? 'token-name-help token-name-error' : 'token-name-help'}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <span id="token-name-help" class="field-help">
          Who or what will use it, e.g. “CI deploy bot”.
        </span>
        {errors.name ? (
          <span id="token-name-error" class="field-error">
            {errors.name}
          </span>
        ) : null}
      </div>
      <fieldset aria-describedby={errors.scopes ? 'token-scopes-error' : undefined}>
        <legend>Scopes</legend>
        <p class="field-help ws-tight">
          A token can be given only what your own token may do. admin includes write, and write includes read.
        </p>
        {(Object.keys(BUNDLES) as Bundle[]).map((bundle) => {
          const allowed = grantable(bundle);
          return (
            <div class="check" key={bundle}>
              <input
                id={`scope-${bundle}`}
                type="checkbox"
                checked={scopes.has(bundle)}
                disabled={!allowed}
                aria-describedby={`scope-${bundle}-help`}
                onChange={(e) => {
                  const next = new Set(scopes);
                  if (e.currentTarget.checked) next.add(bundle);
                  else next.delete(bundle);
                  setScopes(next);
                }}
              />
              <span>
                <label for={`scope-${bundle}`} class="mono">
                  {bundle}
                </label>
                <span id={`scope-${bundle}-help`} class="field-help ws-block">
                  {BUNDLES[bundle].help}
                  {allowed ? '' : ' Your token does not hold this scope, so it cannot grant it.'}
                </span>
              </span>
            </div>
          );
        })}
        {errors.scopes ? (
          <span id="token-scopes-error" class="field-error">
            {errors.scopes}
          </span>
        ) : null}
      </fieldset>
      {problem?.status === 403 && problem.tag === 'Forbidden' ? (
        <p class="notice">The API refused these scopes: a new token may not do more than the token you are signed in with.</p>
      ) : null}
    </ConfirmDialog>
  );
}

/** The revoke confirmation: what stops working, and when; a clear warning for the token in use. */
export function RevokeTokenDialog({ token, onClose, onRevoked }: { token: ApiToken; onClose: () => void; onRevoked: () => void }) {
  const session = useSession();
  const { client, caller } = session;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const own = token.tokenId === caller.tokenId;

  const revoke = async () => {
    setBusy(true);
    setProblem(null);
    try {
      await client.call('revokeApiToken', { params: { tokenId: token.tokenId } });
      // The API may accept a revoked token for a while (authorizer cache): end the session now.
      if (own) session.signOut('You revoked the API token you were signed in with. Sign in with another token.');
      else onRevoked();
    } catch (err) {
      setProblem(asProblem(err));
      setBusy(false);
    }
  };

  return (
    <ConfirmDialog
      title={`Revoke “${token.name}”?`}
      onClose={onClose}
      describedBy="revoke-token-what"
      problem={problem}
      confirm={{
        label: busy ? 'Revoking…' : own ? 'Revoke and sign out' : 'Revoke token',
        tone: 'danger',
        onConfirm: () => void revoke(),
        disabled: busy,
      }}
    >
      <div id="revoke-token-what">
        {own ? (
          <p class="problem ws-warning">
            <strong>This is the token you are signed in with.</strong> Revoking it signs you out of the console now, and you will need
            another token to sign in again.
          </p>
        ) : null}
        <p>
          Every client using <span class="mono">{token.tokenId}</span> stops working: REST calls may still be accepted for up to{' '}
          {plural(AUTHORIZER_CACHE_SECONDS, 'second')} (the authorizer cache), MCP refuses it at once. This cannot be undone.
        </p>
      </div>
    </ConfirmDialog>
  );
}
