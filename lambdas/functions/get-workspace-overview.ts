/** Lambda entry of `getWorkspaceOverview` (REST). */
import { restHandler } from '../http/rest-handler';
import { getWorkspaceOverview } from '../operations/workspace';

export const handler = restHandler('getWorkspaceOverview', getWorkspaceOverview);
