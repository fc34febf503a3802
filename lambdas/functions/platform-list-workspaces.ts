/** Lambda entry of `platformListWorkspaces` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformListWorkspaces } from '../operations/platform-workspaces';

export const handler = restFunction('platformListWorkspaces', platformListWorkspaces);
