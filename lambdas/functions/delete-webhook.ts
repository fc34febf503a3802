/** Lambda entry of `deleteWebhook` (REST). */
import { restHandler } from '../http/rest-handler';
import { deleteWebhook } from '../operations/webhooks';

export const handler = restHandler('deleteWebhook', deleteWebhook);
