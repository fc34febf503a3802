/** Lambda entry of `replayWebhookDelivery` (REST). */
import { restHandler } from '../http/rest-handler';
import { replayWebhookDelivery } from '../operations/deliveries';

export const handler = restHandler('replayWebhookDelivery', replayWebhookDelivery);
