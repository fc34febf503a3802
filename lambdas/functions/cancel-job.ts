/** Lambda entry of `cancelJob` (REST). */
import { restFunction } from '../composition/rest-function';
import { cancelJob } from '../operations/recovery';

export const handler = restFunction('cancelJob', cancelJob);
