/** Lambda entry of `platformGetJob` (REST, platform API). */
import { restFunction } from '../composition/rest-function';
import { platformGetJob } from '../operations/platform-workspaces';

export const handler = restFunction('platformGetJob', platformGetJob);
