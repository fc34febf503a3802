/**
 * The metrics adapter (docs/operations.md): what an invocation records is tallied in memory, then
 * written once, at the end of the invocation, in Embedded Metric Format by Powertools Metrics on
 * stdout, which CloudWatch Logs turns into metrics (no API call). An EMF document has one set of
 * dimension values, so a flush writes one document per combination (e.g. one per `outcome`).
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import {
  METRIC_DIMENSIONS,
  METRICS,
  METRICS_NAMESPACE,
  type MetricDimensionValues,
  type MetricKey,
  type MetricsRecorder,
} from '../contract/metrics';

/** The metrics of one dimension combination: a count is one summed value, a duration its samples. */
export interface MetricGroup {
  /** Dimension name → value, besides `stage` (empty for most metrics). */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly values: ReadonlyMap<MetricKey, readonly number[]>;
}

/** Where a flush goes. */
export interface MetricsWriter {
  write(groups: readonly MetricGroup[]): void;
}

/**
 * An invocation's metrics, kept until {@link BufferedMetrics.flush}: counts are summed per metric and
 * dimension values, durations kept as samples. Only the dimensions {@link METRICS} declares for a
 * metric are kept, so no other value (a workspace, an endpoint) can become a dimension.
 */
export class BufferedMetrics implements MetricsRecorder {
  readonly #groups = new Map<string, { dimensions: Record<string, string>; values: Map<MetricKey, number[]> }>();

  constructor(private readonly writer: (groups: readonly MetricGroup[]) => void) {}

  add<K extends MetricKey>(key: K, value: number, dimensions: MetricDimensionValues<K>): void {
    const def = METRICS[key];
    const given = dimensions as Readonly<Record<string, string>>;
    const dims = Object.fromEntries(def.dimensions.map((name: string) => [name, given[name] ?? '']));
    const id = JSON.stringify(dims);
    let group = this.#groups.get(id);
    if (!group) this.#groups.set(id, (group = { dimensions: dims, values: new Map() }));
    const values = group.values.get(key);
    if (!values) group.values.set(key, [value]);
    else if (def.unit === 'Count') values[0]! += value;
    else values.push(value);
  }

  /** Writes what was recorded (nothing when nothing was) and starts over. */
  flush(): void {
    const groups = [...this.#groups.values()];
    this.#groups.clear();
    if (groups.length > 0) this.writer(groups);
  }
}

/**
 * Powertools keeps at most 100 values of a metric per document and publishes on its own when one
 * reaches it, dropping the dimensions added for the document: fewer per document keeps them.
 */
const VALUES_PER_DOCUMENT = 99;

/**
 * The EMF writer of `stage`: one Powertools `Metrics` (namespace {@link METRICS_NAMESPACE}, the
 * only default dimension `stage`; Powertools' own `service` dimension is removed, so a metric's
 * dimensions are exactly those lambdas/contract/metrics.ts lists, as the dashboard and alarms
 * read them). `POWERTOOLS_METRICS_DISABLED=true` (or `POWERTOOLS_DEV`) silences it.
 */
export function emfWriter(stage: string): MetricsWriter {
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [METRIC_DIMENSIONS.stage]: stage });
  return {
    write(groups) {
      for (const group of groups) {
        const longest = Math.max(...[...group.values.values()].map((v) => v.length));
        for (let from = 0; from < longest; from += VALUES_PER_DOCUMENT) {
          for (const [name, value] of Object.entries(group.dimensions)) metrics.addDimension(name, value);
          for (const [key, values] of group.values) {
            for (const value of values.slice(from, from + VALUES_PER_DOCUMENT))
              metrics.addMetric(METRICS[key].name, MetricUnit[METRICS[key].unit], value);
          }
          metrics.publishStoredMetrics();
        }
      }
    },
  };
}
