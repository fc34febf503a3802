/** Lambda entry of `platformGetWorkspace` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformGetWorkspace } from '../operations/platform-workspaces';

export const handler = restFunction('platformGetWorkspace', platformGetWorkspace);
