/** The console's words for failure reasons (console/src/failure-reasons.ts): every reason the dispatcher records reads as a sentence. */
import { describe, expect, it } from 'vitest';
import { explainFailure } from '../../console/src/failure-reasons';
import { AUTH_FAILED, INVALID_STATUS, PROTOCOL_UPGRADE } from '../../lambdas/contract/delivery-statuses';

describe('explainFailure', () => {
  it.each([
    ['http_503', 'The receiver answered HTTP 503.'],
    [PROTOCOL_UPGRADE, 'The receiver answered by switching protocols (101 or an upgrade) instead of answering the POST; not retried.'],
    [INVALID_STATUS, 'The receiver answered with a status outside 100–599; not retried.'],
    [AUTH_FAILED, "The endpoint's OAuth 2.0 token endpoint gave no access token, so nothing was sent to the receiver; it is retried."],
    ['network_error: HPE_INVALID_CONSTANT', 'A network error stopped the request (HPE_INVALID_CONSTANT).'],
    ['queue_receives_exhausted', 'The queue gave the delivery up after too many receives, so it was dead-lettered.'],
  ])('%s', (reason, words) => expect(explainFailure(reason)).toBe(words));

  it('says nothing of a reason it does not know', () => expect(explainFailure('something_new')).toBe(''));
});
