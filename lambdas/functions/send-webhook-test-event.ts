/** Lambda entry of `sendWebhookTestEvent` (REST). */
import { restHandler } from '../http/rest-handler';
import { sendWebhookTestEvent } from '../operations/deliveries';

export const handler = restHandler('sendWebhookTestEvent', sendWebhookTestEvent);
