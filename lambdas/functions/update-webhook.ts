/** Lambda entry of `updateWebhook` (REST). */
import { restFunction } from '../composition/rest-function';
import { updateWebhook } from '../operations/webhooks';

export const handler = restFunction('updateWebhook', updateWebhook);
