/** Lambda entry of `listWebhooks` (REST). */
import { restFunction } from '../composition/rest-function';
import { listWebhooks } from '../operations/webhooks';

export const handler = restFunction('listWebhooks', listWebhooks);
