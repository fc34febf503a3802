/** A paged list shown as a table, with every state designed: loading, error, empty, rows and "load more". */
import type { ComponentChildren, VNode } from 'preact';
import type { Paged } from './load';
import { Empty, LoadMore, Loading, ProblemView } from './ui';

/** What {@link PagedTable} shows. */
export interface PagedTableProps<T> {
  readonly paged: Paged<T>;
  /** Names the table for screen readers (a visually hidden caption). */
  readonly caption: string;
  /** Column headings, in order. */
  readonly columns: readonly string[];
  /** One `<tr>` per item. */
  readonly row: (item: T) => VNode;
  /** The empty state's title and its next step. */
  readonly emptyTitle: string;
  readonly emptyNext?: ComponentChildren;
  /** What is loading, for the loading state. */
  readonly loadingLabel?: string;
}

/** A paged list as a table. */
export function PagedTable<T>({ paged, caption, columns, row, emptyTitle, emptyNext, loadingLabel }: PagedTableProps<T>) {
  if (paged.state === 'loading' && paged.items.length === 0) return <Loading label={loadingLabel} />;
  if (paged.state === 'error' && paged.problem) return <ProblemView problem={paged.problem} onRetry={() => paged.reload()} />;
  if (paged.items.length === 0) return <Empty title={emptyTitle}>{emptyNext}</Empty>;
  return (
    <>
      {/* A wide table scrolls sideways on a narrow screen: the wrapper is focusable so keyboards can scroll it. */}
      <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
        <table>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{paged.items.map(row)}</tbody>
        </table>
      </div>
      {/* A failed "load more" keeps the rows already shown and offers the next page again. */}
      {paged.problem ? <ProblemView problem={paged.problem} onRetry={() => paged.loadMore()} /> : null}
      <LoadMore hasMore={paged.hasMore} loading={paged.loadingMore} onLoad={() => paged.loadMore()} />
    </>
  );
}

/** How many items a page of these lists asks for. */
export const PAGE_SIZE = 50;
