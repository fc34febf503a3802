/**
 * The problem document as a zod schema (docs/behaviour.md#errors), for the OpenAPI document and
 * tests; re-exported by `errors.ts`, whose run-time part is zod-free.
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorTag } from './error-tags';

const KNOWN_TAGS = Object.keys(ERROR_STATUS) as ErrorTag[];

function isKnownTag(value: unknown): value is ErrorTag {
  return typeof value === 'string' && (KNOWN_TAGS as string[]).includes(value);
}

/**
 * How the document shows `tag`: an open set (docs/behaviour.md#errors). A closed `enum` would make
 * a generated client's exhaustive switch (or its decoder) fail on the first tag added later, so
 * the document says `type: string` and lists today's tags in the description and in
 * `x-extensible-enum`, which generators that know it turn into constants and others ignore
 * (`anyOf: [enum, string]` collapses to a plain string in some generators and a wrapper type in
 * others). The schema itself stays closed: this service answers only the tags it knows, as the
 * tests check.
 */
const TAG_DOC = {
  type: 'string',
  description: `The error, by name; its one status, title and \`type\` go with it. An open set: clients must accept tags they do not know (treat them by the HTTP status), as new errors get new tags. Known today: ${KNOWN_TAGS.map((t) => `\`${t}\``).join(', ')}.`,
  'x-extensible-enum': KNOWN_TAGS,
  example: 'WorkspaceNotFound',
};

/** RFC 9457 problem document, as every error response carries it. */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    tag: z.custom<ErrorTag>(isKnownTag).meta(TAG_DOC),
    traceId: z.string(),
    instance: z.string().optional(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .meta({
        description:
          'Validation issues, each with its place in the request (ValidationError, InvalidFilter, InvalidHeader, InvalidAuth and InvalidBranding only).',
      }),
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
