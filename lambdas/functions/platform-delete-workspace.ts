/** Lambda entry of `platformDeleteWorkspace` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformDeleteWorkspace } from '../operations/platform-workspaces';

export const handler = restFunction('platformDeleteWorkspace', platformDeleteWorkspace);
