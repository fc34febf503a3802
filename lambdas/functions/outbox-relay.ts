/**
 * Lambda entry of the outbox relay: the target of the outbox table's stream (an event source
 * mapping filtered to inserts, ReportBatchItemFailures, bisecting, an on-failure queue). It puts
 * each new outbox item on the domain-events bus (docs/architecture.md#outbox).
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { outboxRelayFromEnv } from '../composition/runtime';
import { relayOutboxRecords, type RelayResult } from '../pipeline/outbox-relay';

/** Relays one batch of stream records; a failed record and those after it are retried. */
export function handler(event: DynamoDBStreamEvent): Promise<RelayResult> {
  return relayOutboxRecords(outboxRelayFromEnv(), event.Records);
}
