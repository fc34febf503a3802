/**
 * The service's own CloudWatch metrics, defined once (docs/operations.md): the functions emit them
 * in Embedded Metric Format (Powertools Metrics, no API call), the dashboard and the alarms
 * (lib/constructs/monitoring.ts) read them by these names. Dimensions are low-cardinality only:
 * the stage, and where listed an outcome or a bucket; never a workspace or an endpoint (a metric
 * per endpoint would cost money per endpoint per month; per-endpoint health is the API's job).
 */

/** The CloudWatch namespace of every metric below. */
export const METRICS_NAMESPACE = 'WebhookDelivery';

/** Dimension names. `stage` is on every metric (the `POWERTOOLS_METRICS_...` default dimensions). */
export const METRIC_DIMENSIONS = { stage: 'stage', outcome: 'outcome', bucket: 'bucket', lane: 'lane' } as const;

/** Metric names, their unit, and the dimensions each carries besides `stage`. */
export const METRICS = {
  /** Pending deliveries the publisher created (one per enabled subscribed endpoint of an event). */
  deliveriesPublished: { name: 'DeliveriesPublished', unit: 'Count', dimensions: [] },
  /** Held deliveries the publisher recorded for disabled endpoints. */
  deliveriesHeld: { name: 'DeliveriesHeld', unit: 'Count', dimensions: [] },
  /** Bus events the publisher refused and dropped (not retried), by the refusal's error tag. */
  eventsRefused: { name: 'EventsRefused', unit: 'Count', dimensions: ['outcome'] },
  /** Evidence entries by outcome: delivered, failed, failed_permanent, dead_lettered. */
  attempts: { name: 'Attempts', unit: 'Count', dimensions: ['outcome'] },
  /** Duration of an HTTP attempt, by lane (fast, slow, only). */
  attemptDuration: { name: 'AttemptDuration', unit: 'Milliseconds', dimensions: ['lane'] },
  /** From the delivery's creation to the end of its first attempt. */
  publishToFirstAttempt: { name: 'PublishToFirstAttempt', unit: 'Milliseconds', dimensions: [] },
  /** Deliveries moved to the slow lane, and deferred inside it (docs/behaviour.md#delivery-lanes). */
  laneMoves: { name: 'LaneMoves', unit: 'Count', dimensions: [] },
  laneDeferrals: { name: 'LaneDeferrals', unit: 'Count', dimensions: [] },
  /** Interactive replays started, and recovery jobs started. */
  replays: { name: 'Replays', unit: 'Count', dimensions: [] },
  recoveryJobs: { name: 'RecoveryJobs', unit: 'Count', dimensions: [] },
  /** Endpoints disabled by a failure streak. */
  autoDisables: { name: 'AutoDisables', unit: 'Count', dimensions: [] },
  /** Requests refused by a rate limit, by bucket (the per-token buckets and the workspace quotas). */
  rateLimitRefusals: { name: 'RateLimitRefusals', unit: 'Count', dimensions: ['bucket'] },
} as const satisfies Record<
  string,
  { name: string; unit: 'Count' | 'Milliseconds'; dimensions: readonly (keyof typeof METRIC_DIMENSIONS)[] }
>;

/** A metric's key in {@link METRICS}. */
export type MetricKey = keyof typeof METRICS;

/** The dimension values metric `K` is recorded with besides `stage` (an empty object for most). */
export type MetricDimensionValues<K extends MetricKey> = { readonly [D in (typeof METRICS)[K]['dimensions'][number]]: string };

/**
 * Where the functions and the operations record the metrics above (a port: the composition root's
 * writes EMF, lambdas/composition/metrics.ts). A count adds `value`; a duration is one sample.
 */
export interface MetricsRecorder {
  add<K extends MetricKey>(key: K, value: number, dimensions: MetricDimensionValues<K>): void;
}
