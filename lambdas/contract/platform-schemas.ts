/**
 * Wire shapes of the platform API (docs/api.md#platform-api): the workspace lifecycle, for the
 * platform's own backend, on AWS IAM.
 */
import { z } from 'zod';
import { pageOf } from './page-schemas';
import { CreateApiTokenBodySchema, SlugSchema } from './schemas';

const timestamp = z.string().meta({ example: '2026-11-25T12:00:00.000Z', format: 'date-time' });

/** The statuses of a workspace: `erasing` from the start of its erasure until it is gone. */
const WORKSPACE_STATUSES = ['active', 'erasing'] as const;

const WorkspaceNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/\S/, 'must not be blank')
  .meta({ description: "The workspace's display name.", example: 'Acme Inc.' });

/** A workspace, as the platform API shows it. */
export const WorkspaceSchema = z
  .object({
    slug: SlugSchema,
    name: z.string(),
    createdAt: timestamp,
    status: z.enum(WORKSPACE_STATUSES).meta({
      description:
        '`erasing` while its erasure runs (DELETE answered 202); the slug cannot be created again until the erasure has finished.',
    }),
  })
  .meta({ id: 'Workspace', example: { slug: 'acme', name: 'Acme Inc.', createdAt: '2026-11-25T12:00:00.000Z', status: 'active' } });

/** A workspace. */
export type PlatformWorkspace = z.infer<typeof WorkspaceSchema>;

/** A page of workspaces, in slug order. */
export const WorkspacePageSchema = pageOf(WorkspaceSchema, 'WorkspacePage');

/** Body of POST `/platform/workspaces`: the workspace and its owner member. */
export const CreateWorkspaceBodySchema = z
  .strictObject({
    slug: SlugSchema,
    name: WorkspaceNameSchema,
    owner: z
      .strictObject({
        email: z
          .string()
          .max(254)
          .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/)
          .meta({ description: "The owner member's email.", example: 'owner@acme.test' }),
      })
      .meta({ description: 'The workspace owner, created as its first member (role `owner`).' }),
  })
  .meta({ id: 'CreateWorkspace', example: { slug: 'acme', name: 'Acme Inc.', owner: { email: 'owner@acme.test' } } });

/** Body of PATCH `/platform/workspaces/{slug}`. */
export const UpdateWorkspaceBodySchema = z
  .strictObject({ name: WorkspaceNameSchema })
  .meta({ id: 'UpdateWorkspace', example: { name: 'Acme Corporation' } });

/** Body of POST `/platform/workspaces/{slug}/api-tokens`: any scopes (the platform is not bound by a calling token's). */
export const PlatformCreateApiTokenBodySchema = CreateApiTokenBodySchema.extend({
  scopes: CreateApiTokenBodySchema.shape.scopes.meta({ description: 'The scopes the token grants.' }),
}).meta({ id: 'PlatformCreateApiToken', example: { name: 'Platform backend', scopes: ['admin'] } });
