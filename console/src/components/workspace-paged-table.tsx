/** A paged list shown as a table, with every state designed: loading, error, empty, rows and "load more". */
import type { ComponentChildren } from 'preact';
import type { Paged } from './load';
import { Empty, LoadMore, Loading, ProblemView } from './ui';

/** One column: its heading and what its cell shows for an item. */
export interface Column<T> {
  readonly label: string;
  readonly cell: (item: T) => ComponentChildren;
  /** Extra classes for the cell (e.g. `wrap`, `mono`). */
  readonly class?: string;
}

/** What {@link PagedTable} shows. */
export interface PagedTableProps<T> {
  readonly paged: Paged<T>;
  /** Names the table (a visually hidden caption) and its scrolling region. */
  readonly caption: string;
  readonly columns: readonly Column<T>[];
  readonly rowKey: (item: T) => string;
  /** The empty state's title and its next step. */
  readonly emptyTitle: string;
  readonly emptyNext?: ComponentChildren;
  /** What is loading, for the loading state. */
  readonly loadingLabel?: string;
}

/**
 * A paged list as a table. On a phone each row stacks into a small card, every cell labelled by
 * its column (`data-label`, shown by CSS), instead of a table scrolled sideways.
 */
export function PagedTable<T>({ paged, caption, columns, rowKey, emptyTitle, emptyNext, loadingLabel }: PagedTableProps<T>) {
  if (paged.state === 'loading' && paged.items.length === 0) return <Loading label={loadingLabel} />;
  if (paged.state === 'error' && paged.problem) return <ProblemView problem={paged.problem} onRetry={() => paged.reload()} />;
  if (paged.items.length === 0) return <Empty title={emptyTitle}>{emptyNext}</Empty>;
  return (
    <>
      {/* A wide table may scroll sideways: the wrapper is focusable so a keyboard can scroll it. */}
      <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
        <table class="ws-stack">
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col" key={c.label}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {paged.items.map((item) => (
              <tr key={rowKey(item)}>
                {columns.map((c) => (
                  <td key={c.label} class={c.class} data-label={c.label}>
                    {/* One child, so the stacked layout's label and value are two grid cells. */}
                    <div class="ws-cell">{c.cell(item)}</div>
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
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
