/** Lambda entry of `rotateWebhookSecret` (REST). */
import { restHandler } from '../http/rest-handler';
import { rotateWebhookSecret } from '../operations/webhooks';

export const handler = restHandler('rotateWebhookSecret', rotateWebhookSecret);
