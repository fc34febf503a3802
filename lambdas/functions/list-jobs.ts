/** Lambda entry of `listJobs` (REST). */
import { restFunction } from '../composition/rest-function';
import { listJobs } from '../operations/jobs';

export const handler = restFunction('listJobs', listJobs);
