/** Data loading hooks: every page shows the same loading, error and empty states. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from '../api/client';

/** The state of one load. */
export type Load<T> =
  | { readonly state: 'loading'; readonly data?: undefined; readonly problem?: undefined }
  | { readonly state: 'ready'; readonly data: T; readonly problem?: undefined }
  | { readonly state: 'error'; readonly data?: undefined; readonly problem: ApiProblem };

/** Any thrown value as an {@link ApiProblem}. */
export function asProblem(e: unknown): ApiProblem {
  return e instanceof ApiProblem
    ? e
    : new ApiProblem({
        status: 0,
        title: 'Something went wrong in the console',
        detail: e instanceof Error ? e.message : String(e),
        tag: 'UnexpectedResponse',
      });
}

/**
 * Loads once per change of `deps`; `reload()` loads again (keeping the old data on screen until
 * then); `refresh()` does the same and settles when the new answer is on screen (for the
 * self-refresh schedule of ./live-refresh.ts). A failed refresh keeps the data shown.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): Load<T> & { readonly reload: () => void; readonly refresh: () => Promise<void> } {
  const [state, setState] = useState<Load<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  // Which load is current: an answer to an older one (deps changed meanwhile) is dropped.
  const run = useRef(0);
  useEffect(() => {
    const id = ++run.current;
    load().then(
      (data) => id === run.current && setState({ state: 'ready', data }),
      (e: unknown) => id === run.current && setState({ state: 'error', problem: asProblem(e) }),
    );
    return () => {
      if (id === run.current) run.current++;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const refresh = useCallback(async () => {
    const id = run.current;
    const data = await latest.current();
    if (id === run.current) setState({ state: 'ready', data });
  }, []);
  return { ...state, reload, refresh };
}

/** A paged list (`{items, nextCursor}`) with "load more". */
export interface Paged<T> {
  readonly items: readonly T[];
  readonly state: 'loading' | 'ready' | 'error';
  readonly problem: ApiProblem | null;
  /** True while a further page is loading. */
  readonly loadingMore: boolean;
  readonly hasMore: boolean;
  readonly loadMore: () => void;
  readonly reload: () => void;
  /**
   * Reads the first page again without a loading state and merges it in by `keyOf`: newer items
   * on top, changed ones replaced, pages already loaded kept (the self-refresh of ./live-refresh.ts).
   */
  readonly refresh: (keyOf: (item: T) => string) => Promise<void>;
}

/** Pages through a list; a change of `deps` starts from the first page again. */
export function usePaged<T>(
  loadPage: (cursor: string | undefined) => Promise<{ items: readonly T[]; nextCursor: string | null }>,
  deps: readonly unknown[],
): Paged<T> {
  const [items, setItems] = useState<readonly T[]>([]);
  const [state, setState] = useState<Paged<T>['state']>('loading');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [generation, setGeneration] = useState(0);
  const run = useRef(0);
  const pages = useRef(0);
  const latest = useRef(loadPage);
  latest.current = loadPage;
  useEffect(() => {
    const id = ++run.current;
    setState('loading');
    setProblem(null);
    loadPage(undefined).then(
      (page) => {
        if (id !== run.current) return;
        pages.current = 1;
        setItems(page.items);
        setCursor(page.nextCursor);
        setState('ready');
      },
      (e: unknown) => {
        if (id !== run.current) return;
        setProblem(asProblem(e));
        setState('error');
      },
    );
  }, [...deps, generation]);
  const loadMore = useCallback(() => {
    if (!cursor || loadingMore) return;
    const id = run.current;
    setLoadingMore(true);
    loadPage(cursor).then(
      (page) => {
        if (id !== run.current) return;
        pages.current++;
        setItems((before) => [...before, ...page.items]);
        setCursor(page.nextCursor);
        setLoadingMore(false);
      },
      (e: unknown) => {
        if (id !== run.current) return;
        setProblem(asProblem(e));
        setLoadingMore(false);
      },
    );
  }, [cursor, loadingMore]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const refresh = useCallback(async (keyOf: (item: T) => string) => {
    const id = run.current;
    const page = await latest.current(undefined);
    if (id !== run.current) return;
    const fresh = new Set(page.items.map(keyOf));
    setItems((before) => [...page.items, ...before.filter((item) => !fresh.has(keyOf(item)))]);
    if (pages.current <= 1) setCursor(page.nextCursor);
  }, []);
  return { items, state, problem, loadingMore, hasMore: cursor !== null, loadMore, reload, refresh };
}
