/** Lambda entry of `listWebhooks` (REST). */
import { restHandler } from '../http/rest-handler';
import { listWebhooks } from '../operations/webhooks';

export const handler = restHandler('listWebhooks', listWebhooks);
