/**
 * OpenID Connect discovery (docs/behaviour.md#staff-sign-in): the stage's identity provider's
 * endpoints, read from `<issuer>/.well-known/openid-configuration` and kept for an hour in the
 * function, so a sign-in or a console page load costs no request to the provider most of the time.
 */

/** What the service needs of a provider's metadata. */
interface ProviderMetadata {
  /** Exactly the configured issuer (discovery refuses metadata naming another). */
  readonly issuer: string;
  /** Where the console sends the person to sign in. */
  readonly authorizationEndpoint: string;
  /** Where the console trades the code for tokens (the console's CSP allows `connect-src` to it). */
  readonly tokenEndpoint: string;
  /** The provider's published signing keys. */
  readonly jwksUri: string;
}

/** Reads a provider's metadata: cached, refetched after {@link DISCOVERY_TTL_MS} or after a failure. */
export type ProviderDiscovery = () => Promise<ProviderMetadata>;

/** How long fetched metadata is kept, in milliseconds. */
const DISCOVERY_TTL_MS = 3_600_000;

/** How long one discovery request may take, in milliseconds. */
const DISCOVERY_TIMEOUT_MS = 5000;

/** True for an https URL, or http where the issuer itself is http (a loopback provider in the local stack and tests). */
function endpointOk(value: unknown, issuer: string): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && issuer.startsWith('http:'));
  } catch {
    return false;
  }
}

/**
 * The discovery of `issuer`'s metadata. A document that names another issuer, or lacks an endpoint,
 * is refused (an Error naming it); a failure is not cached, so the next call tries again.
 */
export function providerDiscovery(
  issuer: string,
  options: { readonly fetch?: typeof fetch; readonly now?: () => number } = {},
): ProviderDiscovery {
  const get = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  let cached: { metadata: ProviderMetadata; at: number } | null = null;
  let inflight: Promise<ProviderMetadata> | null = null;
  const load = async (): Promise<ProviderMetadata> => {
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await get(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`OpenID discovery at ${url} answered ${response.status}`);
    const doc = (await response.json()) as Record<string, unknown>;
    if (doc.issuer !== issuer) throw new Error(`OpenID discovery at ${url} names the issuer ${JSON.stringify(doc.issuer)}, not ${issuer}`);
    const { authorization_endpoint: authorizationEndpoint, token_endpoint: tokenEndpoint, jwks_uri: jwksUri } = doc;
    if (!endpointOk(authorizationEndpoint, issuer) || !endpointOk(tokenEndpoint, issuer) || !endpointOk(jwksUri, issuer))
      throw new Error(`OpenID discovery at ${url} lacks an https authorization_endpoint, token_endpoint or jwks_uri`);
    return { issuer, authorizationEndpoint, tokenEndpoint, jwksUri };
  };
  return async () => {
    if (cached && now() - cached.at < DISCOVERY_TTL_MS) return cached.metadata;
    inflight ??= load()
      .then((metadata) => {
        cached = { metadata, at: now() };
        return metadata;
      })
      .finally(() => {
        inflight = null;
      });
    return inflight;
  };
}
