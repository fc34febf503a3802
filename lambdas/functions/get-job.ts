/** Lambda entry of `getJob` (REST). */
import { restFunction } from '../composition/rest-function';
import { getJob } from '../operations/recovery';

export const handler = restFunction('getJob', getJob);
