/**
 * The workspace erasure job's zod schema (docs/behaviour.md#erasing-a-workspace): what the
 * platform API answers to a workspace's DELETE and to a read of the job.
 */
import { z } from 'zod';
import { JobIdSchema } from './job-schemas';
import { SlugSchema } from './schemas';
import { ERASED_KINDS } from './erasure';

/** The statuses of an erasure job. */
const ERASURE_STATUSES = ['running', 'completed', 'failed'] as const;

const EXAMPLE = { created: '2026-11-25T12:00:00.000Z', updated: '2026-11-25T12:03:10.000Z' } as const;

/** A workspace erasure job. */
export const ErasureJobSchema = z
  .object({
    jobId: JobIdSchema,
    kind: z.literal('erase'),
    workspace: SlugSchema,
    status: z.enum(ERASURE_STATUSES).meta({
      description:
        '`running` while the workspace is being erased (its slug stays taken), `completed` once nothing of it is left (the slug is free again), `failed` when a slice kept failing: the workspace stays reserved, partly erased, and a new DELETE resumes the job.',
    }),
    erased: z.record(z.string(), z.number().int().min(0)).meta({
      description: `Items erased so far, by kind: ${ERASED_KINDS.map((k) => `\`${k}\``).join(', ')}. Never more than was really deleted.`,
    }),
    failureReason: z
      .string()
      .optional()
      .meta({ description: 'Why the job failed (only on a failed job): `worker_error` or `worker_timed_out`.' }),
    createdAt: z.string().meta({ format: 'date-time', example: EXAMPLE.created }),
    updatedAt: z.string().meta({ format: 'date-time', example: EXAMPLE.updated }),
    finishedAt: z.string().nullable().meta({ format: 'date-time', description: 'When the job completed or failed; null while running.' }),
  })
  .meta({
    id: 'ErasureJob',
    example: {
      jobId: 'whj_01JD2YC5D6E7F8G9H0J1K2M3NP',
      kind: 'erase',
      workspace: 'acme',
      status: 'running',
      erased: { tokens: 3, sessions: 1, subscriptions: 4, jobs: 1, deliveries: 1200, attempts: 2400, other: 1300 },
      createdAt: EXAMPLE.created,
      updatedAt: EXAMPLE.updated,
      finishedAt: null,
    },
  });

/** A workspace erasure job, as the platform API shows it. */
export type ErasureJob = z.infer<typeof ErasureJobSchema>;
