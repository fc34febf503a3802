/**
 * The fault suite's pipeline: the real publisher, dispatcher, dead-letter consumer and
 * stuck-pending repair on DynamoDB Local, posting to real loopback receivers, driven
 * by a deterministic stand-in for EventBridge (an invocation that fails is invoked
 * again with the same event) and for SQS (receive counts, visibility timeout,
 * ChangeMessageVisibility, redrive to a dead-letter queue after 7 receives). Time is
 * a fake clock that jumps to the next visible message, so no test waits for backoff.
 * Faults: DynamoDB (an SDK middleware on the pipeline's client), SQS sends, and
 * crashes (an invocation abandoned at a given point). A second, fault-free client
 * checks the outcome: {@link checkOutcome}.
 */
import { inject } from 'vitest';
import { MAX_RECEIVES } from '../../lambdas/contract/deployment';
import { isTerminal, type DeliveryRecord } from '../../lambdas/domain/delivery-lifecycle';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { deadLetterDelivery } from '../../lambdas/pipeline/dead-letter';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent, type DomainEvent, type PublishResult } from '../../lambdas/pipeline/publisher';
import { runPendingRepair } from '../../lambdas/pipeline/schedules';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/queue/delivery-queue';
import { createTableContext, type TableContext } from '../../lambdas/store/client';
import { getDelivery, listAttempts } from '../../lambdas/store/deliveries';
import { listDeliveriesOfEndpoint } from '../../lambdas/store/delivery-log';
import type { EndpointRecord } from '../../lambdas/store/endpoints';
import { listNotifications } from '../../lambdas/store/notifications';
import { seedEndpoint, testCatalogue, testSealer } from '../helpers/pipeline';
import type { SeenRequest } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';
import { injectDynamoFaults, type DynamoFaults } from './dynamo-faults';

/** The dispatcher's SQS visibility timeout (6 × its 30 s function timeout): how long a crashed receive stays hidden. */
const VISIBILITY_SECONDS = 180;
/** EventBridge's retries of a failing target, as far as this suite needs (it allows 185). */
const MAX_INVOCATIONS = 12;
/** A bound on the driver's loop: receives of a batch, dead-letter batches and clock jumps. */
const MAX_STEPS = 400;

/** Short sender limits, so a receiver that never answers costs a fraction of a second. */
export const FAULT_SEND_LIMITS = { deadlineMs: 1500, bodyReadMs: 300, bodyCapBytes: 2048 } as const;

interface SimMessage {
  readonly messageId: number;
  readonly deliveryId: string;
  /** Times the dead-letter consumer sent the delivery back (the message's `requeues`). */
  readonly requeues: number;
  receiveCount: number;
  visibleAt: number;
}

/** An SQS queue on the fake clock (only what the pipeline relies on). */
class SimQueue {
  private readonly messages = new Map<number, SimMessage>();
  private ids = 0;
  constructor(
    private readonly clock: () => number,
    private readonly redrive?: { to: SimQueue; maxReceives: number },
  ) {}

  get depth(): number {
    return this.messages.size;
  }

  put(deliveryId: string, delaySeconds = 0, requeues = 0): void {
    const messageId = ++this.ids;
    this.messages.set(messageId, { messageId, deliveryId, requeues, receiveCount: 0, visibleAt: this.clock() + delaySeconds * 1000 });
  }

  /** Visible messages, oldest first, now hidden for the visibility timeout; over-received ones are redriven. */
  receive(max: number): SimMessage[] {
    const now = this.clock();
    const out: SimMessage[] = [];
    for (const m of [...this.messages.values()]
      .filter((x) => x.visibleAt <= now)
      .sort((a, b) => a.visibleAt - b.visibleAt || a.messageId - b.messageId)) {
      if (out.length >= max) break;
      m.receiveCount++;
      if (this.redrive && m.receiveCount > this.redrive.maxReceives) {
        this.messages.delete(m.messageId);
        this.redrive.to.put(m.deliveryId, 0, m.requeues);
        continue;
      }
      m.visibleAt = now + VISIBILITY_SECONDS * 1000;
      out.push(m);
    }
    return out;
  }

  delete(m: SimMessage): void {
    this.messages.delete(m.messageId);
  }

  /** ChangeMessageVisibility. */
  delay(m: SimMessage, seconds: number): void {
    if (this.messages.has(m.messageId)) m.visibleAt = this.clock() + seconds * 1000;
  }

  nextVisibleAt(): number | null {
    let next: number | null = null;
    for (const m of this.messages.values()) next = next === null ? m.visibleAt : Math.min(next, m.visibleAt);
    return next;
  }
}

/** Where a publisher invocation dies, once. */
type PublisherCrash = 'before-enqueue';

/** One expected delivery: an event to an endpoint, and the end it must reach. */
export interface Expected {
  readonly eventId: string;
  readonly endpoint: EndpointRecord;
  readonly receiver: { readonly seen: readonly SeenRequest[] };
  readonly end: 'delivered' | 'dead_lettered';
}

/** What the check found for one scenario. */
export interface Outcome {
  readonly deliveries: number;
  /** Expected deliveries with no row, or whose row never reached its end. */
  readonly lost: number;
  /** Rows beyond one per (event, endpoint), and POSTs under an id that is not the pair's row. */
  readonly duplicated: number;
  /** POSTs that repeated an id the receiver had already seen (allowed: at-least-once under one id). */
  readonly repeatedPosts: number;
  /** Everything wrong, in words (evidence, regressions, counts). */
  readonly problems: string[];
}

/** The pipeline of one scenario. */
export interface Harness {
  /** The pipeline's client (faults apply to it). */
  readonly table: TableContext;
  readonly faults: DynamoFaults;
  /** The fake clock. */
  now(): Date;
  advance(ms: number): void;
  /** SQS send failures: the next `n` sends (publisher or repair) fail. */
  failSends(n: number): void;
  /** An endpoint subscribed to `order.shipped` in the scenario's workspace. */
  endpoint(url: string, enabled?: boolean): Promise<EndpointRecord>;
  /** The bus event `eventId` (payload `{orderId: eventId}`), time = the clock. */
  event(eventId: string): DomainEvent;
  /**
   * EventBridge's invocation of the publisher: invoked again with the same event while it
   * fails (bounded). `crash` kills the first invocation at that point. Returns the invocations made.
   */
  publish(event: DomainEvent, options?: { crash?: PublisherCrash }): Promise<{ invocations: number; result: PublishResult }>;
  /** Puts a second message for a delivery (SQS at-least-once, or a concurrent receive). */
  duplicateMessage(deliveryId: string): void;
  /** Runs the queues until empty (bounded), jumping the clock to each next visible message. */
  settle(): Promise<void>;
  /** The stuck-pending repair, run once the clock is past its delay. */
  repair(): Promise<number>;
  /** Faults injected so far: DynamoDB calls failed, SQS sends failed, crashes. */
  faultCount(): number;
  /** Failures the driver saw (a crashed receive, a failed invocation), in words. */
  readonly crashes: string[];
  /** (status, evidence count) of each delivery after each step that touched it. */
  readonly history: Map<string, { status: string; evidenceCount: number }[]>;
  /** The fault-free client the checks read with. */
  readonly reader: TableContext;
  close(): Promise<void>;
}

let workspaces = 0;

/** A harness on a fresh table; `close` drops it. `dispatch` overrides dispatcher adapters (e.g. a slower sender). */
export async function startHarness(options: { dispatch?: Partial<DispatchDeps> } = {}): Promise<Harness> {
  const fresh = await freshTable();
  const reader = createTableContext({ tableName: fresh.tableName, endpoint: inject('dynamoDbEndpoint') });
  const faults = injectDynamoFaults(fresh.doc);
  let clock = Date.now();
  const now = () => new Date(clock);
  const dlq = new SimQueue(() => clock);
  const queue = new SimQueue(() => clock, { to: dlq, maxReceives: MAX_RECEIVES });
  let sendFailures = 0;
  let injectedSends = 0;
  let injectedCrashes = 0;
  const crashes: string[] = [];
  const history = new Map<string, { status: string; evidenceCount: number }[]>();
  const workspace = `faults-${++workspaces}-${Date.now().toString(36)}`;

  const sqs: DeliveryQueue = {
    async send(messages: readonly DeliveryMessage[]) {
      if (sendFailures > 0) {
        sendFailures--;
        injectedSends++;
        throw new Error('injected SQS SendMessageBatch failure');
      }
      for (const m of messages) queue.put(m.deliveryId);
    },
  };
  const dispatchDeps: DispatchDeps = {
    table: fresh,
    now,
    sender: createHttpSender(FAULT_SEND_LIMITS),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
    secrets: testSealer,
    ...options.dispatch,
  };

  const observe = async (deliveryId: string) => {
    const row = await getDelivery(reader, deliveryId);
    if (!row) return;
    const list = history.get(deliveryId) ?? [];
    list.push({ status: row.status, evidenceCount: row.evidenceCount });
    history.set(deliveryId, list);
  };

  const harness: Harness = {
    table: fresh,
    faults,
    reader,
    crashes,
    history,
    now,
    advance: (ms) => {
      clock += ms;
    },
    faultCount: () => [...faults.injected.values()].reduce((a, b) => a + b, 0) + injectedSends + injectedCrashes,
    failSends: (n) => {
      sendFailures += n;
    },
    endpoint: (url, enabled = true) => seedEndpoint(reader, { workspace, url, eventTypes: ['order.shipped'], enabled }, now()),
    event: (eventId) => ({ id: eventId, time: now().toISOString(), workspace, type: 'order.shipped', payload: { orderId: eventId } }),

    async publish(event, opts = {}) {
      for (let invocation = 1; invocation <= MAX_INVOCATIONS; invocation++) {
        let publisherQueue = sqs;
        let crashed: Promise<never> | null = null;
        if (opts.crash === 'before-enqueue' && invocation === 1) {
          // The container dies on its way to SQS: the send never completes and the invocation fails.
          let die!: () => void;
          crashed = new Promise<never>((_, reject) => {
            die = () => reject(new Error('crashed before the enqueue'));
          });
          injectedCrashes++;
          publisherQueue = { send: () => (die(), new Promise<void>(() => undefined)) };
        }
        const run = publishEvent({ table: fresh, queue: publisherQueue, eventTypes: testCatalogue, now }, event);
        try {
          const result = await (crashed ? Promise.race([run, crashed]) : run);
          return { invocations: invocation, result };
        } catch (e) {
          crashes.push(`publisher invocation ${invocation}: ${(e as Error).message}`);
          // EventBridge waits before it tries again.
          clock += 1000;
        }
      }
      throw new Error(`the publisher failed ${MAX_INVOCATIONS} times for event ${event.id}`);
    },

    duplicateMessage: (deliveryId) => queue.put(deliveryId),

    async settle() {
      for (let step = 0; step < MAX_STEPS; step++) {
        const batch = queue.receive(25);
        if (batch.length > 0) {
          // One batch, its records dispatched concurrently (as the handler does); a throw is that record's failure.
          await Promise.all(
            batch.map(async (m) => {
              try {
                const result = await dispatchDelivery(dispatchDeps, m.deliveryId);
                if (result.kind === 'ack') queue.delete(m);
                else if (result.kind === 'dead_letter') {
                  // As the handler does: to the dead-letter queue, then deleted here.
                  dlq.put(m.deliveryId, 0, m.requeues);
                  queue.delete(m);
                } else if (m.receiveCount >= MAX_RECEIVES) {
                  // As the handler does on the queue's last receive: a new message, due after the delay.
                  queue.put(m.deliveryId, result.delaySeconds, m.requeues);
                  queue.delete(m);
                } else queue.delay(m, result.delaySeconds);
              } catch (e) {
                crashes.push(`dispatch of ${m.deliveryId} (receive ${m.receiveCount}): ${(e as Error).message}`);
              }
              await observe(m.deliveryId);
            }),
          );
          continue;
        }
        const dead = dlq.receive(10);
        if (dead.length > 0) {
          await Promise.all(
            dead.map(async (m) => {
              try {
                const result = await deadLetterDelivery({ table: fresh, now }, m.deliveryId, m.requeues);
                // As the handler does: retries left, back to the delivery queue with one more requeue.
                if (result.kind === 'requeue') queue.put(m.deliveryId, result.delaySeconds, m.requeues + 1);
                dlq.delete(m);
              } catch (e) {
                crashes.push(`dead letter ${m.deliveryId}: ${(e as Error).message}`);
              }
              await observe(m.deliveryId);
            }),
          );
          continue;
        }
        const next = [queue.nextVisibleAt(), dlq.nextVisibleAt()].filter((t): t is number => t !== null);
        if (next.length === 0) return;
        clock = Math.max(clock, Math.min(...next));
      }
      throw new Error(`the queues did not settle in ${MAX_STEPS} steps`);
    },

    async repair() {
      clock += 6 * 60_000;
      return (await runPendingRepair({ table: fresh, queue: sqs, now })).requeued;
    },

    async close() {
      faults.remove();
      reader.doc.destroy();
      await fresh.drop();
    },
  };
  return harness;
}

/**
 * Checks a scenario's end state against what was expected: one row per (event, endpoint)
 * at its end, no POST under another id, complete and contiguous evidence, and no summary
 * that moved backwards (from the harness's history).
 */
export async function checkOutcome(h: Harness, expected: readonly Expected[]): Promise<Outcome> {
  const problems: string[] = [];
  let lost = 0;
  let duplicated = 0;
  let repeatedPosts = 0;
  const rowsOf = new Map<string, DeliveryRecord[]>();
  for (const endpointId of new Set(expected.map((e) => e.endpoint.endpointId))) {
    const page = await listDeliveriesOfEndpoint(h.reader, endpointId, 200);
    const rows = (await Promise.all(page.items.map((d) => getDelivery(h.reader, d.deliveryId)))).filter(
      (r): r is DeliveryRecord => r !== null,
    );
    for (const r of rows) {
      const key = `${endpointId}|${(r.payload as { orderId: string }).orderId}`;
      rowsOf.set(key, [...(rowsOf.get(key) ?? []), r]);
    }
  }

  for (const e of expected) {
    const name = `${e.eventId} → ${e.endpoint.url}`;
    const rows = rowsOf.get(`${e.endpoint.endpointId}|${e.eventId}`) ?? [];
    if (rows.length === 0) {
      lost++;
      problems.push(`${name}: no delivery row`);
      continue;
    }
    if (rows.length > 1) {
      duplicated += rows.length - 1;
      problems.push(`${name}: ${rows.length} rows (${rows.map((r) => r.deliveryId).join(', ')})`);
    }
    const row = rows[0]!;
    if (row.status !== e.end) {
      lost++;
      problems.push(`${name}: ended ${row.status}, expected ${e.end}`);
    }
    // The receiver's view: every POST of this event to this endpoint carries the one id.
    const posts = e.receiver.seen.filter((s) => (JSON.parse(s.body) as { payload?: { orderId?: string } }).payload?.orderId === e.eventId);
    const ids = new Set(posts.map((s) => String(s.headers['webhook-id'])));
    for (const id of ids) {
      if (!rows.some((r) => r.deliveryId === id)) {
        duplicated++;
        problems.push(`${name}: POST under an unknown id ${id}`);
      }
    }
    repeatedPosts += posts.length - ids.size;
    if (e.end === 'delivered' && !ids.has(row.deliveryId)) problems.push(`${name}: delivered but the receiver never saw ${row.deliveryId}`);

    // The evidence: ordinals 1..n, n = evidenceCount, HTTP entries = attempts, the last one the summary's.
    const attempts = (await listAttempts(h.reader, row.deliveryId, 200)).items;
    const ordinals = attempts.map((a) => a.ordinal);
    if (ordinals.join() !== attempts.map((_, i) => i + 1).join()) problems.push(`${name}: attempt ordinals ${ordinals.join()}`);
    if (attempts.length !== row.evidenceCount) problems.push(`${name}: ${attempts.length} attempts, evidenceCount ${row.evidenceCount}`);
    const http = attempts.filter((a) => a.durationMs !== null);
    if (http.length !== row.attempts) problems.push(`${name}: ${http.length} HTTP attempts, summary says ${row.attempts}`);
    const last = attempts[attempts.length - 1];
    if (isTerminal(row.status) && last?.outcome !== row.status)
      problems.push(`${name}: last attempt ${last?.outcome}, summary ${row.status}`);
    if (attempts.filter((a) => a.outcome === 'delivered' || a.outcome === 'dead_lettered').length > 1)
      problems.push(`${name}: more than one terminal entry`);
    const lastHttp = http[http.length - 1];
    if (lastHttp && row.lastResponseStatus !== lastHttp.responseStatus)
      problems.push(`${name}: lastResponseStatus ${row.lastResponseStatus}, last HTTP attempt ${lastHttp.responseStatus}`);
    if (http.length > posts.length) problems.push(`${name}: ${http.length} HTTP attempts recorded, ${posts.length} POSTs received`);

    // No summary regressed: the evidence count never went down, a terminal status never changed.
    const seen = h.history.get(row.deliveryId) ?? [];
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      if (
        b.evidenceCount < a.evidenceCount ||
        (isTerminal(a.status as DeliveryRecord['status']) && (b.status !== a.status || b.evidenceCount !== a.evidenceCount))
      ) {
        problems.push(`${name}: summary went from ${a.status}/${a.evidenceCount} to ${b.status}/${b.evidenceCount}`);
      }
    }
  }
  return { deliveries: expected.length, lost, duplicated, repeatedPosts, problems };
}

/** Notifications of the scenario's workspace about one delivery. */
export async function notificationsAbout(h: Harness, workspace: string, deliveryId: string): Promise<number> {
  const page = await listNotifications(h.reader, workspace, 200);
  return page.items.filter((n) => n.deliveryId === deliveryId).length;
}

/** One row of the suite's summary. */
export interface SummaryRow extends Outcome {
  readonly scenario: string;
  readonly faults: number;
}

/** The suite's summary table, short: one line per scenario, then the totals. */
export function summaryTable(rows: readonly SummaryRow[]): string {
  const head = ['scenario', 'deliveries', 'lost', 'duplicated', 'faults'];
  const body = rows.map((r) => [r.scenario, String(r.deliveries), String(r.lost), String(r.duplicated), String(r.faults)]);
  const total = [
    'total',
    ...[
      rows.reduce((s, r) => s + r.deliveries, 0),
      rows.reduce((s, r) => s + r.lost, 0),
      rows.reduce((s, r) => s + r.duplicated, 0),
      rows.reduce((s, r) => s + r.faults, 0),
    ].map(String),
  ];
  const all = [head, ...body, total];
  const width = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(' | ')} |`;
  return [
    `Fault-injection suite: ${rows.length} scenarios`,
    line(head),
    `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...body.map(line),
    line(total),
  ].join('\n');
}
