/** Lambda entry of `revokeApiToken` (REST). */
import { restHandler } from '../http/rest-handler';
import { revokeApiToken } from '../operations/api-tokens';

export const handler = restHandler('revokeApiToken', revokeApiToken);
