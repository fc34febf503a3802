/** Lambda entry of `platformCreateApiToken` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformCreateApiToken } from '../operations/platform-workspaces';

export const handler = restFunction('platformCreateApiToken', platformCreateApiToken);
