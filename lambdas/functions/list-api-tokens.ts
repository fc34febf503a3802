/** Lambda entry of `listApiTokens` (REST). */
import { restFunction } from '../composition/rest-function';
import { listApiTokens } from '../operations/api-tokens';

export const handler = restFunction('listApiTokens', listApiTokens);
