/** The filter test (docs/behaviour.md#payload-filters): a filter evaluated against a payload the caller sends; nothing is read or written. */
import { AppError } from '../contract/errors';
import { payloadDepthRefusal } from '../contract/input-validation';
import { MAX_PAYLOAD_BYTES } from '../contract/limits';
import { evaluatePayloadFilter, requirePayloadFilter } from '../domain/payload-filter';
import type { OperationImpl } from './context';

/**
 * The payload held to an event's limits, as the publisher holds it: its nesting first (the size's
 * `JSON.stringify` walks it recursively), then its size.
 */
function checkPayload(payload: unknown): void {
  const tooDeep = payloadDepthRefusal(payload);
  if (tooDeep) {
    const issues = (tooDeep.extensions.issues as { message: string }[]).map((i) => ({ path: 'body.payload', message: i.message }));
    throw new AppError(tooDeep.tag, tooDeep.detail, { issues });
  }
  const size = Buffer.byteLength(JSON.stringify(payload ?? null), 'utf8');
  if (size > MAX_PAYLOAD_BYTES)
    throw new AppError('PayloadTooLarge', `The payload is ${size} bytes; at most ${MAX_PAYLOAD_BYTES} are accepted, as for an event`);
}

/** POST /workspaces/{slug}/webhooks/filter-test */
export const testWebhookFilter: OperationImpl<'testWebhookFilter'> = (_deps, _caller, { body }) => {
  const filter = requirePayloadFilter(body.filter, 'body.filter');
  checkPayload(body.payload);
  return Promise.resolve(evaluatePayloadFilter(filter, body.payload));
};
