/**
 * The MCP tools, generated from the contract (docs/architecture.md#one-contract): one per operation,
 * named by the contract, with its path, query and body schemas as the input,
 * its permission, its rate-limit bucket, and its errors as tool errors carrying
 * the REST problem body.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError, isAppError, toProblem } from '../contract/errors';
import { OPERATIONS, type OperationDef, type OperationId } from '../contract/operations';
import { checkPermission, checkWorkspace, parseOperationInput } from '../operations/access';
import type { Caller, OperationImpl, SurfaceRuntime } from '../operations/context';
import { chargeRateLimit } from '../operations/rate-limiter';
import { IMPLEMENTATIONS } from '../operations/index';

/** Server name and version MCP clients see. */
export const MCP_SERVER_INFO = { name: 'webhook-delivery-service', version: '1.0.0' } as const;

function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  return schema instanceof z.ZodObject ? (schema.shape) : {};
}

/** A tool's input: the operation's path parameters (slug included), query and body fields, flat. */
export function toolInputShape(def: OperationDef): Record<string, z.ZodType> {
  return { ...shapeOf(def.params), ...shapeOf(def.query), ...shapeOf(def.body) };
}

/** Splits flat tool arguments back into path, query and body. */
export function splitToolArguments(def: OperationDef, args: Record<string, unknown>): { params: unknown; query: unknown; body: unknown } {
  const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
  return {
    params: pick(Object.keys(shapeOf(def.params))),
    query: pick(Object.keys(shapeOf(def.query))),
    body: def.body ? pick(Object.keys(shapeOf(def.body))) : undefined,
  };
}

/**
 * Runs one tool call as REST runs the operation, in the same order: the workspace check, one hit
 * in the operation's own rate-limit bucket (so a tool call costs what the REST call costs, on top
 * of the gate's `mcp` hit), the permission, the parsing, the implementation.
 */
export async function callTool(def: OperationDef, runtime: SurfaceRuntime, caller: Caller, args: Record<string, unknown>, traceId: string): Promise<CallToolResult> {
  try {
    const raw = splitToolArguments(def, args);
    checkWorkspace(caller, (raw.params as { slug?: string }).slug);
    await chargeRateLimit(runtime.rateLimiter, def.rateLimit, caller.tokenId);
    checkPermission(def, caller);
    const input = parseOperationInput(def, raw);
    const impl = IMPLEMENTATIONS[def.operationId as OperationId] as OperationImpl<OperationId>;
    const result = (await impl(runtime.deps, caller, input as never)) as unknown;
    const structured = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { done: true };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (error) {
    const appError = isAppError(error) ? error : new AppError('InternalError', `Something went wrong on our side. Quote trace id ${traceId} to support.`);
    const problem = toProblem(appError, traceId, def.mcpTool);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem };
  }
}

/** A server with every tool, for one authenticated caller (stateless: one per request). */
export function createMcpServer(runtime: SurfaceRuntime, caller: Caller, traceId: string): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    instructions:
      'Tools of the webhook delivery service. Every tool takes the workspace `slug`; list tools take `limit` and `cursor` and return `items` and `nextCursor`. Errors carry an RFC 9457 problem with a `tag`.',
  });
  for (const def of OPERATIONS as readonly OperationDef[]) {
    server.registerTool(
      def.mcpTool,
      {
        title: def.summary,
        description: `${def.description}${def.permission ? ` Requires permission \`${def.permission}\`.` : ''}`,
        inputSchema: toolInputShape(def),
        annotations: { title: def.summary, readOnlyHint: def.readOnly, destructiveHint: def.destructive ?? false, openWorldHint: false },
      },
      (args: Record<string, unknown>) => callTool(def, runtime, caller, args, traceId),
    );
  }
  return server;
}
