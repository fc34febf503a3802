/** Lambda entry of `createWebhook` (REST). */
import { restHandler } from '../http/rest-handler';
import { createWebhook } from '../operations/webhooks';

export const handler = restHandler('createWebhook', createWebhook);
