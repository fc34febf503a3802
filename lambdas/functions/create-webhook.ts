/** Lambda entry of `createWebhook` (REST). */
import { restFunction } from '../composition/rest-function';
import { createWebhook } from '../operations/webhooks';

export const handler = restFunction('createWebhook', createWebhook);
