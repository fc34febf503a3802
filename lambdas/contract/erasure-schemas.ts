/**
 * Stand-in: replaced by the erasure branch at merge.
 *
 * The workspace erasure job's wire shape (docs/behaviour.md): what DELETE
 * `/platform/workspaces/{slug}` and GET `/platform/jobs/{jobId}` answer.
 */
import { z } from 'zod';
import { JobIdSchema } from './job-schemas';
import { SlugSchema } from './schemas';

const timestamp = z.string().meta({ example: '2026-11-25T12:00:00.000Z', format: 'date-time' });

/** A workspace erasure job: its progress (items deleted so far, by kind) and, once finished, its final report. */
export const ErasureJobSchema = z
  .object({
    jobId: JobIdSchema,
    kind: z.literal('erase'),
    workspace: SlugSchema,
    status: z.enum(['running', 'completed', 'failed']),
    erased: z.record(z.string(), z.number()).meta({
      description:
        'Items deleted so far, by kind: endpoints, secrets, deliveries, attempts, audit, notifications, tokens, sessions, members, jobs, idempotency, subscriptions, health, counters, other.',
    }),
    createdAt: timestamp,
    updatedAt: timestamp,
    finishedAt: timestamp.nullable(),
  })
  .meta({ id: 'ErasureJob' });

/** A workspace erasure job. */
export type ErasureJob = z.infer<typeof ErasureJobSchema>;
