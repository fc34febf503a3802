/**
 * The smoke test's view of the public REST API: one JSON call with the
 * caller's bearer token, and the failure it becomes when the answer is not
 * the expected status (named by the problem's tag and detail, docs/behaviour.md#problem-documents).
 */

/** A call that did not answer what the step expected. */
class ApiCallError extends Error {
  override name = 'ApiCallError';
}

/** What {@link apiClient} returns: one call per request. */
export type ApiCall = <T>(method: string, path: string, expected: number, body?: unknown) => Promise<T>;

/** Problem details as the API answers them; only what the message needs. */
interface Problem {
  tag?: unknown;
  detail?: unknown;
  traceId?: unknown;
}

/** Short text of an unexpected answer: status, problem tag and detail (or the body's start), trace id. */
function describeAnswer(status: number, text: string): string {
  let problem: Problem | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object') problem = parsed;
  } catch {
    problem = undefined;
  }
  if (problem && typeof problem.tag === 'string') {
    const trace = typeof problem.traceId === 'string' ? ` (trace ${problem.traceId})` : '';
    return `${status} ${problem.tag}: ${typeof problem.detail === 'string' ? problem.detail : ''}${trace}`;
  }
  return `${status} ${text.slice(0, 200)}`;
}

/**
 * A client for `apiUrl` with `token`. Each call expects one status; any
 * other, a network error or a body that is not JSON (when one is expected)
 * rejects with {@link ApiCallError}.
 */
export function apiClient(apiUrl: string, token: string, timeoutMs = 10_000): ApiCall {
  const base = apiUrl.replace(/\/+$/, '');
  return async <T>(method: string, path: string, expected: number, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      throw new ApiCallError(`${method} ${path} did not answer (${e instanceof Error ? e.message : String(e)}${cause})`);
    }
    const text = await res.text();
    if (res.status !== expected)
      throw new ApiCallError(`${method} ${path} answered ${describeAnswer(res.status, text)}; expected ${expected}`);
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiCallError(`${method} ${path} answered ${res.status} with a body that is not JSON`);
    }
  };
}
