/**
 * Health counting for one consumed batch (docs/architecture.md#health-counters): the dispatcher
 * and the dead-letter consumer collect what each record recorded, then, after the batch's
 * records, add the batch's counts with one write per counter key.
 */
import type { DeliveryRecord } from '../domain/delivery-lifecycle';
import { aggregateBatch, type HealthObservation } from '../domain/delivery-health';
import type { TableContext } from '../store/client';
import type { Observation } from '../store/deliveries';
import { addBatchIncrements } from '../store/health-counters';

/**
 * An observation of `delivery` as health counts it (docs/behaviour.md#endpoint-health): an HTTP
 * attempt (`http`, a URL refused at dispatch included) or bookkeeping.
 */
export function healthObservation(
  delivery: DeliveryRecord,
  http: boolean,
  attempt: Pick<Observation['attempt'], 'outcome' | 'timestamp' | 'durationMs' | 'responseStatus' | 'failureReason'>,
): HealthObservation {
  return {
    workspace: delivery.workspace,
    endpointId: delivery.endpointId,
    http,
    outcome: attempt.outcome,
    timestamp: attempt.timestamp,
    durationMs: attempt.durationMs,
    responseStatus: attempt.responseStatus,
    failureReason: attempt.failureReason,
  };
}

/** What the records of one batch recorded, gathered as they finish (they run concurrently). */
export class BatchHealth {
  private readonly observations: HealthObservation[] = [];

  /** Keeps a recorded observation; `undefined` (nothing recorded: a duplicate, a gone row) is ignored. */
  add(observation: HealthObservation | undefined): void {
    if (observation) this.observations.push(observation);
  }

  /** The observations kept so far. */
  get size(): number {
    return this.observations.length;
  }

  /** Writes the batch's counts; throws when a write failed (the caller logs it: those counts are lost). */
  async flush(table: TableContext): Promise<void> {
    const increments = aggregateBatch(this.observations.splice(0));
    if (increments) await addBatchIncrements(table, increments);
  }
}
