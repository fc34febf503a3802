/**
 * What a function needs of an operation at run time, zod-free: its route, checks and input schemas
 * as plain data (its prose and MCP tool are in lambdas/generated/mcp-tools.ts, for the MCP function only). Generated from the contract's {@link OperationDef}s (lambdas/generated/contract.ts,
 * by lib/generate/contract-code.ts), so the contract stays the one source.
 */
import type { HttpMethod, OperationDef, OperationId, RouteKind } from './operations';
import type { InputNode } from './input-validation';

/** One operation as functions see it. */
export interface OperationRoute {
  readonly operationId: OperationId;
  readonly method: HttpMethod;
  readonly path: string;
  /** How the route is authenticated (its default filled in). */
  readonly auth: RouteKind;
  readonly successStatus: OperationDef['successStatus'];
  /** The status of a dry run (`dryRun: true` in the body), for an operation that has one. */
  readonly dryRunStatus?: 200;
  readonly permission: OperationDef['permission'];
  /** A token route whose path names no workspace ({@link OperationDef.workspaceless}). */
  readonly workspaceless?: boolean;
  /** Only a staff session may call it ({@link OperationDef.staffOnly}). */
  readonly staffOnly?: boolean;
  readonly rateLimit: OperationDef['rateLimit'];
  /** The MCP tool of a token route; absent for the other kinds. */
  readonly mcpTool?: string;
  readonly readOnly: boolean;
  readonly destructive?: boolean;
  readonly idempotent?: boolean;
  /** The path, query and body schemas. */
  readonly input: { readonly params: InputNode; readonly query?: InputNode; readonly body?: InputNode };
}
