/** Lambda entry of `getWorkspaceOverview` (REST). */
import { restFunction } from '../composition/rest-function';
import { getWorkspaceOverview } from '../operations/workspace';

export const handler = restFunction('getWorkspaceOverview', getWorkspaceOverview);
