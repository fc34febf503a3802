/** Lambda entry of `testWebhookFilter` (REST). */
import { restFunction } from '../composition/rest-function';
import { testWebhookFilter } from '../operations/payload-filter';

export const handler = restFunction('testWebhookFilter', testWebhookFilter);
