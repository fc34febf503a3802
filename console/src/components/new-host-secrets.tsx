/**
 * A URL change to another host, on an endpoint with secrets (docs/behaviour.md#custom-headers): the
 * API never sends a stored secret to a new host unasked, so the same save must give the value of
 * every secret header again (or remove it) and, with OAuth 2.0, the client secret. These fields
 * appear under "URL" only then, always empty.
 */
import type { Endpoint } from '../api/contract';
import { REDACTED } from '../../../lambdas/contract/limits';
import { describedBy, FieldError } from './option-section';

/** The secret header names of an endpoint as a write caller reads it (their values read `<redacted>`). */
export const secretHeaderNames = (endpoint: Endpoint): string[] =>
  Object.entries(endpoint.headers)
    .filter(([, value]) => value === REDACTED)
    .map(([name]) => name)
    .sort((a, b) => a.localeCompare(b));

/** True when `to` is on another origin (scheme, host and port) than `from`; false when either does not parse. */
export function movesHost(from: string, to: string): boolean {
  try {
    return new URL(from).origin !== new URL(to).origin;
  } catch {
    return false;
  }
}

/** The key of the client secret among {@link NewHostSecrets}' values. */
export const CLIENT_SECRET_KEY = '\u0000clientSecret';

/** The secrets to give again for the new host: one empty field per secret header, and the client secret with OAuth 2.0. */
export function NewHostSecrets({
  endpoint,
  idPrefix,
  values,
  onInput,
  error,
}: {
  endpoint: Endpoint;
  idPrefix: string;
  values: Readonly<Record<string, string>>;
  onInput: (key: string, value: string) => void;
  error: string | undefined;
}) {
  const names = secretHeaderNames(endpoint);
  const errorId = `${idPrefix}-new-host-error`;
  return (
    <fieldset class="new-host-secrets" aria-describedby={describedBy(error, errorId, `${idPrefix}-new-host-help`)}>
      <legend>Secrets for the new host</legend>
      <p id={`${idPrefix}-new-host-help`} class="field-help">
        The URL moves to another host. Stored secrets are never sent to a new host unless you give them again here.
      </p>
      {error ? <FieldError id={errorId}>{error}</FieldError> : null}
      {names.map((name, i) => (
        <div class="field" key={name}>
          <label class="field-label" for={`${idPrefix}-new-host-${i}`}>
            New value of {name}
          </label>
          <input
            id={`${idPrefix}-new-host-${i}`}
            class="mono"
            autoComplete="off"
            spellcheck={false}
            value={values[name] ?? ''}
            onInput={(e) => onInput(name, e.currentTarget.value)}
            aria-describedby={`${idPrefix}-new-host-${i}-help`}
          />
          <p id={`${idPrefix}-new-host-${i}-help`} class="field-help">
            Leave empty to remove the header.
          </p>
        </div>
      ))}
      {endpoint.auth ? (
        <div class="field">
          <label class="field-label" for={`${idPrefix}-new-host-client-secret`}>
            OAuth 2.0 client secret
          </label>
          <input
            id={`${idPrefix}-new-host-client-secret`}
            class="mono"
            autoComplete="off"
            spellcheck={false}
            value={values[CLIENT_SECRET_KEY] ?? ''}
            onInput={(e) => onInput(CLIENT_SECRET_KEY, e.currentTarget.value)}
          />
        </div>
      ) : null}
    </fieldset>
  );
}
