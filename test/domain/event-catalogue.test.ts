/**
 * The event-type catalogue (docs/behaviour.md#event-catalogue): the configuration file's checks,
 * payload problems worded one way for built-in and configured types, and the deployment's
 * catalogue built from the generated code agreeing with the one built at run time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { deploymentCatalogue } from '../../lambdas/domain/configured-event-types';
import { createEventCatalogue, parseEventTypesConfig } from '../../lambdas/domain/event-catalogue';
import {
  builtInProblems,
  catalogueOf,
  configuredInfo,
  configuredProblems,
  type PayloadValidator,
} from '../../lambdas/domain/event-catalogue-core';
import raw from '../../config/event-types.json';
import { EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS } from '../../lambdas/contract/aws-limits';

const schema = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] };

describe('parseEventTypesConfig', () => {
  it('reads the file’s types', () => {
    expect(parseEventTypesConfig({ types: [{ name: 'order.shipped', payloadSchema: schema }] })).toEqual([
      { name: 'order.shipped', payloadSchema: schema },
    ]);
    expect(parseEventTypesConfig({ types: [] })).toEqual([]);
  });

  it('refuses anything but {"types": [...]}', () => {
    for (const bad of [null, undefined, {}, { types: {} }, { types: 'x' }, []])
      expect(() => parseEventTypesConfig(bad)).toThrow('event types configuration: expected {"types": [...]}');
  });

  it('names every problem, with its index', () => {
    expect(() =>
      parseEventTypesConfig({
        types: [
          { name: 'Order.Shipped', payloadSchema: schema },
          { name: 'webhook.test_event', payloadSchema: schema },
          { name: 'order.paid' },
          { name: 'order.paid', payloadSchema: 'x', description: 7 },
          null,
        ],
      }),
    ).toThrow(
      'event types configuration: types[0].name must be dotted lower-case words; types[1].name webhook.test_event is built in; ' +
        'types[2].payloadSchema must be a JSON Schema object; types[3].payloadSchema must be a JSON Schema object; ' +
        'types[3].description must be a string; types[4].name must be dotted lower-case words; ' +
        'types[4].payloadSchema must be a JSON Schema object',
    );
  });

  it('refuses a name longer than EventBridge allows a DetailType, and takes one at the limit', () => {
    const at = `a.${'b'.repeat(EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS - 2)}`;
    expect(parseEventTypesConfig({ types: [{ name: at, payloadSchema: schema }] })).toHaveLength(1);
    expect(() => parseEventTypesConfig({ types: [{ name: `${at}c`, payloadSchema: schema }] })).toThrow(
      `types[0].name must be at most ${EVENTBRIDGE_DETAIL_TYPE_MAX_CHARS} characters`,
    );
  });

  it('refuses a name given twice, once', () => {
    const t = { name: 'order.paid', payloadSchema: schema };
    expect(() => parseEventTypesConfig({ types: [t, t, t, { ...t, name: 'order.sent' }, { ...t, name: 'order.sent' }] })).toThrow(
      /^event types configuration: repeated type names: order\.paid, order\.sent$/,
    );
  });

  it('accepts a description that is a string', () => {
    expect(parseEventTypesConfig({ types: [{ name: 'order.paid', description: 'Paid.', payloadSchema: schema }] })).toEqual([
      { name: 'order.paid', description: 'Paid.', payloadSchema: schema },
    ]);
  });
});

describe('payload problems', () => {
  it('a built-in payload’s problems name the path under payload', () => {
    expect(
      builtInProblems([
        { path: ['items', 0, 'sku'], message: 'Required' },
        { path: [], message: 'Expected object' },
      ]),
    ).toEqual(['payload.items.0.sku: Required', 'payload: Expected object']);
  });

  it('a configured payload’s problems come from its validator’s errors; none when it passes', () => {
    const failing: PayloadValidator = Object.assign(() => false, {
      errors: [{ instancePath: '/items/0', message: 'must be string' }, { instancePath: '' }],
    });
    expect(configuredProblems(failing, {})).toEqual(['payload.items.0: must be string', 'payload: invalid']);
    expect(
      configuredProblems(
        Object.assign(() => false, { errors: null }),
        {},
      ),
    ).toEqual([]);
    expect(
      configuredProblems(
        Object.assign(() => true, { errors: [{ instancePath: '/x', message: 'stale' }] }),
        {},
      ),
    ).toEqual([]);
  });

  it('a configured type is listed with its name as the description when it has none', () => {
    expect(configuredInfo({ name: 'order.paid', payloadSchema: schema })).toEqual({
      name: 'order.paid',
      description: 'order.paid',
      payloadSchema: schema,
      builtIn: false,
    });
    expect(configuredInfo({ name: 'order.paid', description: 'Paid.', payloadSchema: schema }).description).toBe('Paid.');
  });

  it('a catalogue knows its validated types only and answers null for another', () => {
    const c = catalogueOf([], new Map([['a.b', (p: unknown) => (p === 1 ? [] : ['payload: not 1'])]]));
    expect(c.has('a.b')).toBe(true);
    expect(c.has('c.d')).toBe(false);
    expect(c.validate('a.b', 1)).toEqual([]);
    expect(c.validate('a.b', 2)).toEqual(['payload: not 1']);
    expect(c.validate('c.d', 1)).toBeNull();
  });
});

describe('the catalogue', () => {
  // Built in a hook, not at collection: a throw must fail the tests, not hide them.
  let configured: ReturnType<typeof parseEventTypesConfig>;
  let atRunTime: ReturnType<typeof createEventCatalogue>;
  let deployed: ReturnType<typeof deploymentCatalogue>;
  beforeAll(() => {
    configured = parseEventTypesConfig(raw);
    atRunTime = createEventCatalogue(configured);
    deployed = deploymentCatalogue();
  });

  it('built from the generated code is the one built at run time, listed alike', () => {
    expect(deployed.types).toEqual(atRunTime.types);
    expect(deploymentCatalogue()).toBe(deployed);
    expect(deployed.types.filter((t) => !t.builtIn).map((t) => t.name)).toEqual(configured.map((t) => t.name));
    expect(deployed.types.filter((t) => t.builtIn).length).toBeGreaterThan(0);
  });

  it('validates built-in and configured payloads alike, with the same words', () => {
    const cases: Array<[string, unknown]> = [
      ['webhook.test_event', { message: 'hi', sentAt: '2026-11-26T10:00:00.000Z', endpointId: 'whe_1' }],
      ['webhook.test_event', { message: 1 }],
      ['webhook.test_event', null],
      ['order.shipped', { orderId: 'o_1' }],
      ['order.shipped', { orderId: 1 }],
      ['order.shipped', {}],
      ['order.unknown', {}],
    ];
    for (const [name, payload] of cases) expect(deployed.validate(name, payload)).toEqual(atRunTime.validate(name, payload));
    expect(deployed.validate('webhook.test_event', { message: 'hi', sentAt: 'x', endpointId: 'whe_1' })).toEqual([]);
    expect(deployed.validate('webhook.test_event', { message: 1, sentAt: 'x', endpointId: 'whe_1' })).toEqual([
      'payload.message: Invalid input: expected string, received number',
    ]);
    expect(deployed.validate('order.shipped', { orderId: 1 })).toEqual(['payload.orderId: must be string']);
    expect(deployed.validate('order.shipped', {})).toEqual(["payload: must have required property 'orderId'"]);
    expect(deployed.validate('order.unknown', {})).toBeNull();
    expect(deployed.has('order.shipped')).toBe(true);
    expect(deployed.has('order.unknown')).toBe(false);
  });

  it('holds the built-in types only when nothing is configured', () => {
    const builtIn = createEventCatalogue();
    expect(builtIn.types).toEqual(deployed.types.filter((t) => t.builtIn));
    expect(builtIn.has('order.shipped')).toBe(false);
  });

  it('names every problem of a configured payload, and takes schemas with annotations of their own', () => {
    const c = createEventCatalogue([
      {
        name: 'order.paid',
        payloadSchema: { ...schema, properties: { orderId: { type: 'string' }, total: { type: 'number' } }, 'x-owner': 'billing' },
      },
    ]);
    expect(c.validate('order.paid', { orderId: 1, total: 'x' })).toEqual([
      'payload.orderId: must be string',
      'payload.total: must be number',
    ]);
  });

  it('a type of the run-time catalogue with no description is listed under its name', () => {
    const c = createEventCatalogue([{ name: 'order.paid', payloadSchema: schema }]);
    expect(c.types.at(-1)).toEqual({ name: 'order.paid', description: 'order.paid', payloadSchema: schema, builtIn: false });
    expect(c.validate('order.paid', {})).toEqual(["payload: must have required property 'orderId'"]);
  });
});
