/** Lambda entry of `listApiTokens` (REST). */
import { restHandler } from '../http/rest-handler';
import { listApiTokens } from '../operations/api-tokens';

export const handler = restHandler('listApiTokens', listApiTokens);
