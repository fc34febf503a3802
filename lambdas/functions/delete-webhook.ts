/** Lambda entry of `deleteWebhook` (REST). */
import { restFunction } from '../composition/rest-function';
import { deleteWebhook } from '../operations/webhooks';

export const handler = restFunction('deleteWebhook', deleteWebhook);
