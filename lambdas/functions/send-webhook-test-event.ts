/** Lambda entry of `sendWebhookTestEvent` (REST). */
import { restFunction } from '../composition/rest-function';
import { sendWebhookTestEvent } from '../operations/deliveries';

export const handler = restFunction('sendWebhookTestEvent', sendWebhookTestEvent);
