/**
 * Recovery jobs' zod schemas (docs/behaviour.md#recovery-jobs): the recover request, its dry-run
 * answer and the job resource. The statuses are zod-free, in `jobs.ts`.
 */
import { z } from 'zod';
import { sinceNotAfterUntilInstants, isInstant } from './input-rules';
import { JOB_STATUSES, RECOVERABLE_STATUSES, DEFAULT_RECOVERY_STATUSES, RECOVERY_COUNT_CAP } from './jobs';
import { idSchema, EndpointIdSchema } from './schemas';
import { PageQuerySchema } from './page-schemas';

const EXAMPLE = {
  jobId: 'whj_01JD2YC5D6E7F8G9H0J1K2M3NP',
  since: '2026-11-25T00:00:00.000Z',
  until: '2026-11-25T12:00:00.000Z',
  created: '2026-11-25T12:00:00.000Z',
  updated: '2026-11-25T12:00:05.000Z',
} as const;

export const JobIdSchema = idSchema('whj', '01JD2YC5D6E7F8G9H0J1K2M3NP').meta({ description: 'Job id' });

/** An ISO 8601 instant with `Z` or an offset. */
const instant = (description: string) =>
  z
    .string()
    .max(64)
    .refine(isInstant, { message: 'must be an ISO 8601 date-time with Z or an offset (e.g. 2026-11-25T12:00:00Z)' })
    .meta({ description, example: EXAMPLE.since, format: 'date-time' });

/** Body of `POST …/webhooks/{endpointId}/recover`. */
export const RecoverBodySchema = z
  .object({
    since: instant('Replay deliveries created at or after this instant.'),
    until: instant(
      '… and at or before this one. Fixed when the job is created: at most (and by default) the creation time, so the job never matches its own replays.',
    ).optional(),
    statuses: z
      .array(z.enum(RECOVERABLE_STATUSES))
      .min(1)
      .max(RECOVERABLE_STATUSES.length)
      .optional()
      .meta({
        description: `Statuses to replay: any of ${RECOVERABLE_STATUSES.map((s) => `\`${s}\``).join(', ')}. Default ${DEFAULT_RECOVERY_STATUSES.map((s) => `\`${s}\``).join(' and ')}.`,
      }),
    includeReplayed: z.boolean().optional().meta({
      description:
        'Also replay deliveries that already have a replay (interactive or by an earlier recovery: see `replays` on the delivery). Default false, so a recovery run twice over the same window replays nothing twice; a replay that failed and has no replay of its own is a candidate like any delivery. A job never replays one delivery twice, nor its own replays.',
    }),
    dryRun: z
      .boolean()
      .optional()
      .meta({ description: 'Only count the matching deliveries (200 `{matched, matchedAtLeast, skippedReplayed}`); nothing is changed.' }),
  })
  .strict()
  .refine(sinceNotAfterUntilInstants, { message: 'must not be after until', path: ['since'] })
  .meta({
    id: 'RecoverDeliveries',
    example: { since: EXAMPLE.since, until: EXAMPLE.until, statuses: ['failed_permanent', 'dead_lettered'] },
  });

/** The dry-run answer of a recover request. */
const matchedAtLeast = z.boolean().meta({
  description: `True when the count stopped at its cap (the first ${RECOVERY_COUNT_CAP} deliveries of the window): \`matched\` and \`skippedReplayed\` are then lower bounds. False: both are exact.`,
});

const skippedReplayed = z.number().int().min(0).meta({
  description: 'Deliveries that matched but already have a replay, left out because `includeReplayed` is not true.',
});

export const RecoveryCountSchema = z
  .object({
    matched: z.number().int().min(0).meta({ description: 'Deliveries a recovery with this body would replay now.' }),
    matchedAtLeast,
    skippedReplayed,
  })
  .meta({ id: 'RecoveryCount', example: { matched: 42, matchedAtLeast: false, skippedReplayed: 3 } });

/** A recovery job. */
export const JobSchema = z
  .object({
    jobId: JobIdSchema,
    kind: z.literal('recover'),
    endpointId: EndpointIdSchema,
    status: z.enum(JOB_STATUSES).meta({
      description:
        '`running` until every match is replayed (`completed`), it is cancelled (`cancelled`) or it cannot go on (`failed`: the endpoint was disabled or deleted).',
    }),
    since: z.string().meta({ format: 'date-time', example: EXAMPLE.since }),
    until: z.string().meta({ format: 'date-time', example: EXAMPLE.until }),
    statuses: z.array(z.enum(RECOVERABLE_STATUSES)),
    includeReplayed: z.boolean().meta({ description: 'Whether the job also replays deliveries that already have a replay.' }),
    matched: z.number().int().min(0).meta({ description: 'The dry-run count taken when the job was created.' }),
    matchedAtLeast,
    skippedReplayed,
    replayed: z.number().int().min(0).meta({ description: 'Replays written so far (each a new pending delivery with `replayedFrom`).' }),
    skipped: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Matches that no longer matched when the job reached them (changed or deleted meanwhile).' }),
    createdAt: z.string().meta({ format: 'date-time', example: EXAMPLE.created }),
    updatedAt: z.string().meta({ format: 'date-time', example: EXAMPLE.updated }),
    finishedAt: z
      .string()
      .nullable()
      .meta({ format: 'date-time', description: 'When the job completed, was cancelled or failed; null while running.' }),
  })
  .meta({
    id: 'Job',
    example: {
      jobId: EXAMPLE.jobId,
      kind: 'recover',
      endpointId: 'whe_01JD2Y8M7K3V9Q4T6W1X5Z0ABC',
      status: 'running',
      since: EXAMPLE.since,
      until: EXAMPLE.until,
      statuses: ['failed_permanent', 'dead_lettered'],
      includeReplayed: false,
      matched: 42,
      matchedAtLeast: false,
      skippedReplayed: 3,
      replayed: 20,
      skipped: 0,
      createdAt: EXAMPLE.created,
      updatedAt: EXAMPLE.updated,
      finishedAt: null,
    },
  });

/** A job, as responses show it. */
export type Job = z.infer<typeof JobSchema>;

/** One or more job statuses, comma-separated (the delivery log's `status` form). */
const JOB_STATUS_LIST = new RegExp(`^(?:${JOB_STATUSES.join('|')})(?:,(?:${JOB_STATUSES.join('|')}))*$`);

/** Query of `GET /workspaces/{slug}/jobs`: the page query and a status filter. */
export const JobListQuerySchema = PageQuerySchema.extend({
  status: z
    .string()
    .max(200)
    .regex(JOB_STATUS_LIST, `must be one or more of ${JOB_STATUSES.join(', ')}, comma-separated`)
    .optional()
    .meta({
      description: `Only jobs in these statuses: one or more of ${JOB_STATUSES.map((s) => `\`${s}\``).join(', ')}, comma-separated.`,
      example: 'running',
      // Declared as the list it is, like the delivery log's `status` (form style, no explode).
      param: {
        schema: { type: 'array', items: { type: 'string', enum: [...JOB_STATUSES] }, minItems: 1 },
        style: 'form',
        explode: false,
        example: ['running'],
      },
    }),
});
