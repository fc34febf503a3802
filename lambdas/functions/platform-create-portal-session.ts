/** Lambda entry of `platformCreatePortalSession` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformCreatePortalSession } from '../operations/platform-workspaces';

export const handler = restFunction('platformCreatePortalSession', platformCreatePortalSession);
