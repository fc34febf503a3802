/**
 * Payload fuzzing (docs/behaviour.md#limits): generated JSON texts (keys such as `__proto__`,
 * `constructor` and `toString`, any Unicode including lone surrogates, numbers beyond DynamoDB's
 * range, duplicate keys, texts long enough to be stored deflated, nesting around
 * MAX_PAYLOAD_DEPTH) published as the Lambda runtime hands them over (`JSON.parse` of the text)
 * through the real publisher against DynamoDB Local, then dispatched by the real dispatcher to a
 * loopback receiver. Accepted: read back as the same JSON value (and the same text, key order
 * included), and POSTed as exactly the spec's body. Deeper than the limit: refused with a
 * ValidationError, without any write.
 *
 * Reproduce a run with FUZZ_SEED=<seed> (printed). FUZZ_RUNS sets the number of events (default
 * 150: part of `npm test`), FUZZ_TIME_MS the wall-time bound; `npm run fuzz` runs 10,000 and
 * requires all of them (FUZZ_REQUIRE_ALL=1).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from '../../lambdas/contract/limits';
import { createEventCatalogue } from '../../lambdas/domain/event-catalogue';
import { eventDeliveryId } from '../../lambdas/domain/ids';
import { dispatchDelivery, type DispatchDeps } from '../../lambdas/pipeline/dispatcher';
import { createHttpSender } from '../../lambdas/pipeline/http-sender';
import { publishEvent, type PublishDeps } from '../../lambdas/pipeline/publisher';
import { getDelivery } from '../../lambdas/store/deliveries';
import type { EndpointRecord } from '../../lambdas/store/endpoints';
import { capturingQueue, seedEndpoint, testSealer } from '../helpers/pipeline';
import { scriptedReceiver, type SeenRequest } from '../helpers/scripted-receiver';
import { freshTable } from '../helpers/table';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? (RUNS > 2000 ? 30 * 60_000 : 40_000));
const REQUIRE_ALL = process.env.FUZZ_REQUIRE_ALL === '1';
const REPRO = `FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npx vitest run test/fuzz/payload-fuzz.test.ts`;

const TYPE = 'any.payload';
const catalogue = createEventCatalogue([{ name: TYPE, description: 'any JSON', payloadSchema: {} }]);

// ——— generated JSON texts ———

/** Keys that name something on Object.prototype or in a JavaScript object's machinery. */
const SPECIAL_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'length',
  '0',
  '',
];

const key = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_KEYS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  // Any UTF-16 code units, lone surrogates included (JSON.stringify escapes them).
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);

/** A scalar as JSON text. */
const scalar = fc.oneof(
  fc.constantFrom(
    'null',
    'true',
    'false',
    '0',
    '-0',
    '1e300',
    '-1.7976931348623157e308',
    '5e-324',
    '123456789012345678901234567890',
    '0.1',
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.integer().map(String),
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => JSON.stringify(s)),
);

/** Any JSON text of moderate size (duplicate keys included: the value is what JSON.parse makes of them). */
const { value: anyJson } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 6 }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(key, tie('value')), { maxLength: 5 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
}));

/** A wider JSON text (an array of generated values): large enough to be stored deflated. */
const wideJson = fc.array(anyJson, { minLength: 10, maxLength: 40 }).map((items) => `[${items.join(',')}]`);

/** A JSON text nested `levels` arrays and objects deep around a generated value, `levels` near the limit. */
const deepJson = fc
  .tuple(
    fc.integer({ min: MAX_PAYLOAD_DEPTH - 3, max: MAX_PAYLOAD_DEPTH + 2 }),
    fc.array(fc.option(key, { nil: null }), { minLength: MAX_PAYLOAD_DEPTH + 2, maxLength: MAX_PAYLOAD_DEPTH + 2 }),
    fc.oneof(scalar, anyJson),
  )
  .map(([levels, wrappers, inner]) =>
    wrappers.slice(0, levels).reduce<string>((text, k) => (k === null ? `[${text}]` : `{${JSON.stringify(k)}:${text}}`), inner),
  );

/** `levels` objects inside one another under `__proto__` and `constructor` keys, around a number. */
const nestedText = (levels: number) =>
  Array.from({ length: levels }, (_, i) => (i % 2 ? 'constructor' : '__proto__')).reduce((text, k) => `{"${k}":${text}}`, '1');

/** How deeply a parsed JSON value nests arrays and objects (the oracle: plainly recursive, fine at these depths). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
  return 1 + Math.max(0, ...children.map(depthOf));
}

// ——— the pipeline under test ———

let table: Awaited<ReturnType<typeof freshTable>>;
let receiver: Awaited<ReturnType<typeof scriptedReceiver>>;
let endpoint: EndpointRecord;
const WORKSPACE = 'payload-fuzz';
let publishDeps: PublishDeps;
let dispatchDeps: DispatchDeps;

beforeAll(async () => {
  table = await freshTable();
  receiver = await scriptedReceiver((_req, res) => res.writeHead(204).end());
  endpoint = await seedEndpoint(table, { workspace: WORKSPACE, url: receiver.url, eventTypes: [TYPE] });
  publishDeps = { table, queue: capturingQueue(), eventTypes: catalogue, now: () => new Date() };
  dispatchDeps = {
    table,
    now: () => new Date(),
    sender: createHttpSender({ deadlineMs: 5000, bodyReadMs: 500, bodyCapBytes: 2048 }),
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    urlPolicy: { allowLoopback: true },
    secrets: testSealer,
  };
});
afterAll(async () => {
  await receiver?.stop();
  await table?.drop();
});

describe('payload fuzz', () => {
  it(
    `any JSON within the limits is stored, read and delivered as sent; deeper is refused unwritten (seed ${SEED})`,
    async () => {
      const stats = { accepted: 0, refusedDeep: 0, tooLarge: 0, maxDepthAccepted: 0, specialKeys: 0, kilobyte: 0 };
      let n = 0;
      const result = await fc.check(
        fc.asyncProperty(
          fc.oneof({ weight: 3, arbitrary: anyJson }, { weight: 1, arbitrary: wideJson }, { weight: 1, arbitrary: deepJson }),
          async (text) => {
            const payload = JSON.parse(text) as unknown;
            const expectedText = JSON.stringify(payload);
            const eventId = `fuzz-${SEED}-${++n}`;
            const time = new Date().toISOString();
            const deliveryId = eventDeliveryId(eventId, endpoint.endpointId, new Date(time));
            const event = { id: eventId, time, workspace: WORKSPACE, type: TYPE, payload };
            if (depthOf(payload) > MAX_PAYLOAD_DEPTH) {
              await expect(publishEvent(publishDeps, event)).rejects.toMatchObject({ tag: 'ValidationError' });
              expect(await getDelivery(table, deliveryId), `no row for a refused payload: ${text}`).toBeNull();
              stats.refusedDeep++;
              return;
            }
            if (Buffer.byteLength(expectedText) > MAX_PAYLOAD_BYTES) {
              stats.tooLarge++;
              return;
            }
            const { deliveryIds } = await publishEvent(publishDeps, event);
            expect(deliveryIds).toEqual([deliveryId]);
            const row = await getDelivery(table, deliveryId);
            expect(JSON.stringify(row?.payload), `read back: ${text}`).toBe(expectedText);
            // The same JSON value: what the text reads as (JSON has no -0, so JSON.stringify writes it 0).
            expect(row?.payload).toEqual(JSON.parse(expectedText));

            const before = receiver.seen.length;
            expect(await dispatchDelivery(dispatchDeps, deliveryId)).toMatchObject({ kind: 'ack', reason: 'delivered' });
            const seen: SeenRequest | undefined = receiver.seen[before];
            expect(seen?.body, `delivered body: ${text}`).toBe(
              `{"deliveryId":"${deliveryId}","eventType":"${TYPE}","payload":${expectedText}}`,
            );
            stats.accepted++;
            if (expectedText.length >= 1024) stats.kilobyte++;
            stats.maxDepthAccepted = Math.max(stats.maxDepthAccepted, depthOf(payload));
            if (SPECIAL_KEYS.some((k) => k !== '' && expectedText.includes(`${JSON.stringify(k)}:`))) stats.specialKeys++;
          },
        ),
        {
          seed: SEED,
          numRuns: RUNS,
          interruptAfterTimeLimit: TIME_MS,
          markInterruptAsFailure: REQUIRE_ALL,
          // First, whatever the time bound leaves: one payload at the limit, one past it.
          examples: [[nestedText(MAX_PAYLOAD_DEPTH)], [nestedText(MAX_PAYLOAD_DEPTH + 1)]],
        },
      );
      console.log(
        `payload fuzz: seed ${SEED}, ${n} events: ${stats.accepted} accepted and delivered (${stats.specialKeys} with special keys, ${stats.kilobyte} of 1 KB or more, ` +
          `deepest ${stats.maxDepthAccepted}), ${stats.refusedDeep} refused as deeper than ${MAX_PAYLOAD_DEPTH}, ${stats.tooLarge} over the size limit; reproduce: ${REPRO}`,
      );
      expect(result.failed, `fast-check failed (${REPRO}): ${fc.defaultReportMessage(result) ?? ''}`).toBe(false);
      expect(stats.refusedDeep, 'the runs reached past the depth limit').toBeGreaterThan(0);
      expect(stats.maxDepthAccepted, 'the runs reached the depth limit').toBeGreaterThanOrEqual(MAX_PAYLOAD_DEPTH - 3);
    },
    TIME_MS + 60_000,
  );
});
