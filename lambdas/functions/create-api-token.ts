/** Lambda entry of `createApiToken` (REST). */
import { restFunction } from '../composition/rest-function';
import { createApiToken } from '../operations/api-tokens';

export const handler = restFunction('createApiToken', createApiToken);
