/** Lambda entry of `getWebhook` (REST). */
import { restHandler } from '../http/rest-handler';
import { getWebhook } from '../operations/webhooks';

export const handler = restHandler('getWebhook', getWebhook);
