/** Lambda entry of `createApiToken` (REST). */
import { restHandler } from '../http/rest-handler';
import { createApiToken } from '../operations/api-tokens';

export const handler = restHandler('createApiToken', createApiToken);
