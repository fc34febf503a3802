/** Lambda entry of `revokeApiToken` (REST). */
import { restFunction } from '../composition/rest-function';
import { revokeApiToken } from '../operations/api-tokens';

export const handler = restFunction('revokeApiToken', revokeApiToken);
