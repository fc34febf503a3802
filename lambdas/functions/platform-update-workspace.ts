/** Lambda entry of `platformUpdateWorkspace` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformUpdateWorkspace } from '../operations/platform-workspaces';

export const handler = restFunction('platformUpdateWorkspace', platformUpdateWorkspace);
