/**
 * lambdas/generated/ is what the contract and config/event-types.json give now (run
 * `npm run generate` after changing either), and the generator refuses what it cannot model.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deploymentCatalogue } from '../../lambdas/domain/configured-event-types';
import { createEventCatalogue, parseEventTypesConfig } from '../../lambdas/domain/event-catalogue';
import { CONFIGURED_EVENT_TYPES } from '../../lambdas/generated/event-catalogue';
import { assertGeneratedCodeFresh, inputNodeOf, renderEventCatalogueModule, staleGeneratedFiles } from '../../lib/generate/contract-code';
import raw from '../../config/event-types.json';

describe('generated code', () => {
  it('is fresh: regenerating gives the checked-in files', () => {
    expect(staleGeneratedFiles()).toEqual([]);
    expect(() => assertGeneratedCodeFresh()).not.toThrow();
  });

  it('is stale once the configured types change', () => {
    const changed = { types: [...parseEventTypesConfig(raw), { name: 'order.cancelled', payloadSchema: { type: 'object' } }] };
    expect(renderEventCatalogueModule(changed)).not.toBe(renderEventCatalogueModule());
  });

  it('refuses inline refinements and unsupported kinds, naming where', () => {
    expect(() => inputNodeOf(z.object({ a: z.string().refine((v) => v !== 'x') }), 'op.body')).toThrow(/op\.body\.a: .*exported function/);
    expect(() =>
      inputNodeOf(
        z.object({ a: z.string() }).superRefine(() => undefined),
        'op.body',
      ),
    ).toThrow(/superRefine/);
    expect(() => inputNodeOf(z.union([z.string(), z.number()]), 'op.query')).toThrow(/union/);
    expect(() => inputNodeOf(z.email(), 'op.query')).toThrow(/format/);
  });
});

describe('the deployment catalogue, from generated code', () => {
  const runtime = createEventCatalogue(parseEventTypesConfig(raw));
  const generated = deploymentCatalogue();

  it('lists what the run-time catalogue lists', () => {
    expect(generated.types).toEqual(runtime.types);
    expect(CONFIGURED_EVENT_TYPES.map((t) => t.name)).toEqual(parseEventTypesConfig(raw).map((t) => t.name));
  });

  it('finds the same problems in payloads, built-in and configured', () => {
    const payloads: unknown[] = [
      {},
      null,
      [],
      'x',
      { message: 'm', sentAt: 's', endpointId: 'e' },
      { message: 1, sentAt: null, extra: true },
      { orderId: 'o-1', carrier: 7 },
      { orderId: 7, trackingNumber: ['x'] },
      { endpointId: 'e', url: 'u', consecutiveFailures: 1.5 },
      { tokenId: 't', name: 'n', scopes: ['read', 2] },
    ];
    for (const t of runtime.types) {
      for (const p of payloads) expect([t.name, generated.validate(t.name, p)]).toEqual([t.name, runtime.validate(t.name, p)]);
    }
    expect(generated.validate('no.such_type', {})).toBeNull();
  });
});
