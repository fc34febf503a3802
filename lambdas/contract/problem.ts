/**
 * The problem document as a zod schema (docs/behaviour.md#errors), for the OpenAPI document and
 * tests; re-exported by `errors.ts`, whose run-time part is zod-free.
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorTag } from './error-tags';

/** RFC 9457 problem document, as every error response carries it. */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    tag: z.enum(Object.keys(ERROR_STATUS) as [ErrorTag, ...ErrorTag[]]),
    traceId: z.string(),
    instance: z.string().optional(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Validation issues (ValidationError only).' }),
    rule: z.string().optional().meta({
      description:
        'The URL rule that failed (InvalidWebhookUrl only): scheme, credentials, localhost, single_label, ip_not_public, too_long, malformed.',
    }),
    unknownEventTypes: z
      .array(z.string())
      .optional()
      .meta({ description: 'The event types not in the catalogue (UnknownEventType only).' }),
    requiredPermission: z.string().optional().meta({ description: 'The permission the operation needs (Forbidden only).' }),
    excessPermissions: z
      .array(z.string())
      .optional()
      .meta({ description: 'Requested permissions beyond the caller’s (Forbidden on token creation only).' }),
  })
  .meta({
    id: 'Problem',
    description: 'RFC 9457 problem details. `tag` names the error; `traceId` can be quoted to support.',
    example: {
      type: 'urn:problem:webhooks:WorkspaceNotFound',
      title: 'Workspace not found',
      status: 404,
      detail: 'No workspace "acme" for this token',
      tag: 'WorkspaceNotFound',
      traceId: '1-67a0c0de-4f1e2d3c4b5a69788796a5b4',
    },
  });

/** A problem document. */
export type Problem = z.infer<typeof ProblemSchema>;
