/** Lambda entry of `replayWebhookDelivery` (REST). */
import { restFunction } from '../composition/rest-function';
import { replayWebhookDelivery } from '../operations/deliveries';

export const handler = restFunction('replayWebhookDelivery', replayWebhookDelivery);
