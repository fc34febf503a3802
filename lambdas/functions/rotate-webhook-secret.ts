/** Lambda entry of `rotateWebhookSecret` (REST). */
import { restFunction } from '../composition/rest-function';
import { rotateWebhookSecret } from '../operations/webhooks';

export const handler = restFunction('rotateWebhookSecret', rotateWebhookSecret);
