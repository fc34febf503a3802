/**
 * The console's hash route as data (`#/a/b?x=1`), apart from the router's hooks so that it runs
 * anywhere: a malformed address is a route like any other, shown as the not-found page.
 */

/** The current location inside the console. */
export interface Route {
  /** Path segments, e.g. `['endpoints', 'ep_…']`. */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  /** True when the path is not valid percent-encoding (`#/deliveries/%ZZ`): no page is there. */
  readonly malformed?: true;
}

/** Parses a hash (`#/a/b?x=1`); a path that does not decode is a {@link Route.malformed} route, never an error. */
export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = raw.split('?', 2);
  const query = new URLSearchParams(search);
  try {
    return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), query };
  } catch (error) {
    if (!(error instanceof URIError)) throw error;
    return { segments: [], query, malformed: true };
  }
}
