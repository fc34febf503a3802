/** Lambda entry of `updateWebhook` (REST). */
import { restHandler } from '../http/rest-handler';
import { updateWebhook } from '../operations/webhooks';

export const handler = restHandler('updateWebhook', updateWebhook);
