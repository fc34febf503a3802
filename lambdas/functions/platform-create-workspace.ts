/** Lambda entry of `platformCreateWorkspace` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformCreateWorkspace } from '../operations/platform-workspaces';

export const handler = restFunction('platformCreateWorkspace', platformCreateWorkspace);
