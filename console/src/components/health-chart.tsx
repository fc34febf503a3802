/**
 * An endpoint's health (getWebhookHealth): a window switch (24 h hourly / 7 d daily), a plain
 * SVG bar chart of delivered and failed attempts per bucket, and the same facts in words and in
 * a table, so nothing is told by colour or shape alone.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EndpointHealth, HealthWindow } from '../api/contract';
import { useSession } from '../session';
import { plural } from '../plural';
import { useLoad } from './load';
import { Loading, ProblemView, Time, percent } from './ui';

const WINDOWS: readonly { value: HealthWindow; label: string }[] = [
  { value: '24h', label: '24 hours, hourly' },
  { value: '7d', label: '7 days, daily' },
];

const hourLabel = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const hourNumber = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });
// Daily buckets are UTC days: labelled in UTC so a bucket is never shown as the day before.
const dayLabel = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', timeZone: 'UTC' });
const dayNumber = new Intl.DateTimeFormat(undefined, { day: 'numeric', timeZone: 'UTC' });
const dayLong = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
const hourLong = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A bucket's start, short (axis) or long (table). */
function bucketLabel(start: string, window: HealthWindow, long = false): string {
  const date = new Date(start);
  if (window === '7d') return long ? dayLong.format(date) : dayLabel.format(date);
  return long ? hourLong.format(date) : hourLabel.format(date);
}

/** Milliseconds in words, "—" when unknown. */
function ms(value: number | null): string {
  return value === null ? '—' : `≤ ${value} ms`;
}

/** `byResponseStatus` keys in reading order: status codes ascending, then timeout and network_error. */
function statusEntries(byStatus: Record<string, number>): [string, number][] {
  return Object.entries(byStatus).sort(([a], [b]) => {
    const na = Number(a);
    const nb = Number(b);
    if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
    if (Number.isFinite(na)) return -1;
    if (Number.isFinite(nb)) return 1;
    return a.localeCompare(b);
  });
}

/** A response status key in words. */
function statusName(key: string): string {
  if (key === 'timeout') return 'Timed out';
  if (key === 'network_error') return 'Network error';
  return `HTTP ${key}`;
}

/** One sentence saying what the chart shows, for its accessible name. */
function healthSentence(health: EndpointHealth): string {
  const span = health.window === '24h' ? 'the last 24 hours' : 'the last 7 days';
  if (health.attempts === 0) return `No delivery attempts in ${span}.`;
  const worst = health.series.reduce((a, b) => (b.failed > a.failed ? b : a));
  const when =
    health.window === '24h'
      ? `in the hour starting ${bucketLabel(worst.start, '24h', true)}`
      : `on ${bucketLabel(worst.start, '7d', true)} (UTC)`;
  const peak = worst.failed > 0 ? ` Most failures (${worst.failed}) ${when}.` : '';
  return `${plural(health.attempts, 'attempt')} in ${span}: ${health.delivered} delivered, ${health.failed} failed; success rate ${percent(health.successRate)}.${peak}`;
}

/** The endpoint's health panel with its window switch; its heading is an h3 inside the page's "Overview and health". */
export function HealthPanel({ endpointId }: { endpointId: string }) {
  const { client } = useSession();
  const [span, setSpan] = useState<HealthWindow>('24h');
  const health = useLoad(
    () => client.call('getWebhookHealth', { params: { endpointId }, query: { window: span } }),
    [client, endpointId, span],
  );
  const shown = health.state === 'ready' ? health.data : undefined;
  // Until the new window arrives the old one stays on screen, marked as updating.
  const stale = shown !== undefined && shown.window !== span;

  return (
    <section class="section health" aria-labelledby="health-title">
      <div class="section-header">
        <h3 id="health-title">Health</h3>
        <div class="row">
          <div class="segmented" role="group" aria-label="Health window">
            {WINDOWS.map((w) => (
              <button
                key={w.value}
                type="button"
                class="button button-small"
                aria-pressed={span === w.value}
                onClick={() => setSpan(w.value)}
              >
                {w.label}
              </button>
            ))}
          </div>
          <button type="button" class="button button-small button-quiet" onClick={() => health.reload()}>
            Refresh health
          </button>
        </div>
      </div>
      {health.state === 'loading' ? <Loading label="Loading health…" /> : null}
      {health.state === 'error' ? <ProblemView problem={health.problem} onRetry={() => health.reload()} /> : null}
      {shown ? (
        <div class={`card health-card${stale ? ' is-stale' : ''}`} aria-busy={stale}>
          <HealthSummary health={shown} />
          <HealthChart health={shown} />
          <details class="health-table">
            <summary>Show the numbers per {shown.window === '24h' ? 'hour' : 'day'}</summary>
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Attempts per {shown.window === '24h' ? 'hour' : 'day'}</caption>
                <thead>
                  <tr>
                    <th scope="col">{shown.window === '24h' ? 'Hour starting' : 'Day (UTC)'}</th>
                    <th scope="col">Delivered</th>
                    <th scope="col">Failed</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.series.map((b) => (
                    <tr key={b.start}>
                      <td>{bucketLabel(b.start, shown.window, true)}</td>
                      <td>{b.delivered}</td>
                      <td>{b.failed}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
          <p class="muted health-note">
            From <Time iso={shown.from} /> to <Time iso={shown.to} />. Attempts are HTTP attempts: a delivery retried three times counts
            three.
          </p>
        </div>
      ) : null}
    </section>
  );
}

function HealthSummary({ health }: { health: EndpointHealth }) {
  const statuses = statusEntries(health.byResponseStatus);
  return (
    <div class="health-summary">
      <dl class="health-stats">
        <div>
          <dt>Success rate</dt>
          <dd class="stat">{percent(health.successRate)}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd class="stat">{health.attempts}</dd>
        </div>
        <div>
          <dt>Delivered</dt>
          <dd class="stat">{health.delivered}</dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd class="stat">
            {health.failed}
            {health.failedPermanent > 0 ? <span class="stat-note"> ({health.failedPermanent} permanently)</span> : null}
          </dd>
        </div>
        <div>
          <dt>Dead-lettered</dt>
          <dd class="stat">{health.deadLettered}</dd>
        </div>
        <div>
          <dt>Latency p50</dt>
          <dd class="stat stat-small">{ms(health.latencyMs.p50)}</dd>
        </div>
        <div>
          <dt>Latency p95</dt>
          <dd class="stat stat-small">{ms(health.latencyMs.p95)}</dd>
        </div>
      </dl>
      <div class="by-status">
        <h3 id="by-status-title">Attempts by response</h3>
        {statuses.length === 0 ? (
          <p class="muted">None in this window.</p>
        ) : (
          <ul class="status-counts" aria-labelledby="by-status-title">
            {statuses.map(([key, count]) => (
              <li key={key} class={Number(key) >= 200 && Number(key) < 300 ? 'status-ok' : 'status-bad'}>
                <span>{statusName(key)}</span> <strong>{count}</strong>
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

const H = 220;
const PAD = { top: 12, right: 12, bottom: 40, left: 44 };

/** A "nice" axis maximum ≥ value (1, 2, 5 × 10^n). */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Width a label of the chart's 12 px axis text takes, roughly (wider than most glyphs, so labels never touch). */
const labelWidth = (label: string) => label.length * 7.2;

/**
 * The buckets whose label is drawn: every `every`-th, counted back from the newest (whose label ends
 * at its bar, the others centred on theirs), leaving out any that would touch the one after it.
 */
function labelledBuckets(
  series: readonly { start: string }[],
  labelOf: (start: string) => string,
  every: number,
  barX: (i: number) => number,
  barW: number,
): Set<number> {
  const shown = new Set<number>();
  let leftEdge = Infinity;
  for (let i = series.length - 1; i >= 0; i -= every) {
    const width = labelWidth(labelOf(series[i]!.start));
    const right = i === series.length - 1 ? barX(i) + barW : barX(i) + barW / 2 + width / 2;
    if (right + 6 > leftEdge) continue;
    shown.add(i);
    leftEdge = right - width;
  }
  return shown;
}

/** The bar chart: delivered (bottom) and failed (top) stacked per bucket. */
function HealthChart({ health }: { health: EndpointHealth }) {
  // Drawn at the width it is shown at, so labels keep their size on a phone.
  const figure = useRef<HTMLElement>(null);
  const [W, setW] = useState(720);
  useEffect(() => {
    const el = figure.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setW(Math.max(280, Math.round(entry.contentRect.width)));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const series = health.series;
  const max = niceMax(Math.max(0, ...series.map((b) => b.delivered + b.failed)));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(series.length, 1);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  // Label every bucket of 7 days; of 24 hours, as many as fit, counted back from the latest.
  const labelEvery = series.length > 12 ? (W < 520 ? 6 : 4) : 1;
  // On a narrow chart a day is only its number and an hour only its hour (the axis title says what they are).
  const labelOf = (start: string) =>
    W >= 520 ? bucketLabel(start, health.window) : (health.window === '7d' ? dayNumber : hourNumber).format(new Date(start));
  const labelled = labelledBuckets(series, labelOf, labelEvery, (i) => PAD.left + i * slot + (slot - barW) / 2, barW);
  const unit = health.window === '24h' ? 'hour' : 'day (UTC)';
  return (
    <figure class="health-figure" ref={figure}>
      <div class="legend" aria-hidden="true">
        <span>
          <span class="legend-swatch swatch-delivered" />
          Delivered
        </span>
        <span>
          <span class="legend-swatch swatch-failed" />
          Failed
        </span>
      </div>
      <svg
        class="chart"
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Attempts per ${unit}, delivered and failed. ${healthSentence(health)}`}
        preserveAspectRatio="xMidYMid meet"
      >
        {(max >= 2 && max % 2 === 0 ? [0, max / 2, max] : [0, max]).map((tick) => (
          <g key={tick}>
            <line class="axis grid" x1={PAD.left} x2={W - PAD.right} y1={y(tick)} y2={y(tick)} />
            <text x={PAD.left - 6} y={y(tick) + 3} text-anchor="end">
              {tick}
            </text>
          </g>
        ))}
        {series.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          const dTop = y(b.delivered);
          const fTop = y(b.delivered + b.failed);
          const label = labelOf(b.start);
          const showLabel = labelled.has(i);
          return (
            <g key={b.start}>
              {b.delivered > 0 ? <rect class="bar-delivered" x={x} y={dTop} width={barW} height={y(0) - dTop} /> : null}
              {b.failed > 0 ? <rect class="bar-failed" x={x} y={fTop} width={barW} height={dTop - fTop} /> : null}
              {showLabel ? (
                // The newest bucket's label ends at its bar, so a narrow chart never cuts it off.
                <text
                  x={i === series.length - 1 ? x + barW : x + barW / 2}
                  y={H - PAD.bottom + 14}
                  text-anchor={i === series.length - 1 ? 'end' : 'middle'}
                >
                  {label}
                </text>
              ) : null}
            </g>
          );
        })}
        <line class="axis" x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
        <text class="axis-title" x={PAD.left + plotW / 2} y={H - 6} text-anchor="middle">
          {health.window === '24h' ? 'Hour (your time)' : 'Day (UTC)'}
        </text>
        <text class="axis-title" x={12} y={PAD.top + plotH / 2} text-anchor="middle" transform={`rotate(-90 12 ${PAD.top + plotH / 2})`}>
          Attempts
        </text>
        {health.attempts === 0 ? (
          <text class="chart-empty" x={PAD.left + plotW / 2} y={PAD.top + plotH / 2} text-anchor="middle">
            No attempts in this window
          </text>
        ) : null}
      </svg>
      <figcaption class="field-help">{healthSentence(health)}</figcaption>
    </figure>
  );
}
