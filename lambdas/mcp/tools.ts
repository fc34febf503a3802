/**
 * The MCP tools, generated from the contract (docs/architecture.md#one-contract): one per operation,
 * named by the contract, with its path, query and body schemas as the input,
 * its permission, its rate-limit bucket, and its errors as tool errors carrying
 * the REST problem body. The SDK's low-level server with the tools as generated data
 * (lambdas/generated/contract.ts): input schemas as JSON Schema, arguments checked by the
 * operation's own generated input schemas, so the function carries no zod of ours.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { AppError, isAppError, toProblem } from '../contract/errors';
import type { TokenOperationId } from '../contract/operations';
import { NO_BODY } from '../contract/input-validation';
import { fitPage } from '../contract/pagination';
import type { OperationRoute } from '../contract/routes';
import { OPERATION_ROUTES } from '../generated/contract';
import { MCP_TOOLS } from '../generated/mcp-tools';
import { authorize, parseOperationInput } from '../operations/access';
import type { Caller, OperationImpl, SurfaceRuntime } from '../operations/context';
import { IMPLEMENTATIONS } from '../operations/index';

/** Server name and version MCP clients see. */
const MCP_SERVER_INFO = { name: 'webhook-delivery-service', version: '1.0.0' } as const;

const INSTRUCTIONS =
  'Tools of the webhook delivery service. Every tool takes the workspace `slug` (but `list_workspaces`, which lists the ones the token may open, and the staff session tools); list tools take `limit` and `cursor` and return `items` and `nextCursor` (a page may hold fewer than `limit` items: follow `nextCursor` until it is null). Errors carry an RFC 9457 problem with a `tag`.';

function keysOf(node: OperationRoute['input']['params'] | undefined): string[] {
  return node?.t === 'object' ? Object.keys(node.shape) : [];
}

/**
 * Splits flat tool arguments back into path, query and body. Every argument that is neither a path
 * nor a query field is the body's, so an unknown one meets the body's strict schema and is refused
 * as REST refuses it (an operation without a body checks them against {@link NO_BODY}).
 */
function splitToolArguments(
  def: Pick<OperationRoute, 'input'>,
  args: Record<string, unknown>,
): { params: unknown; query: unknown; body: unknown } {
  const pathKeys = keysOf(def.input.params);
  const queryKeys = keysOf(def.input.query);
  const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
  const outside = new Set([...pathKeys, ...queryKeys]);
  return {
    params: pick(pathKeys),
    query: pick(queryKeys),
    body: pick(Object.keys(args).filter((k) => !outside.has(k))),
  };
}

/** A tool's result: the structured content, and the same JSON as text for clients that read only text. */
function toolResult(structured: Record<string, unknown>): CallToolResult {
  // Own string keys only: a page's resume function (a symbol key) is not content.
  const content = Object.fromEntries(Object.entries(structured));
  return { content: [{ type: 'text', text: JSON.stringify(content) }], structuredContent: content };
}

/**
 * Bytes of the MCP function's Lambda response carrying `result`: the function URL's result whose
 * body is the JSON-RPC answer to `id` (its headers are left to the page budget's headroom).
 */
function answerBytes(result: CallToolResult, id: RequestId): number {
  return Buffer.byteLength(JSON.stringify({ statusCode: 200, headers: {}, body: JSON.stringify({ result, jsonrpc: '2.0', id }) }), 'utf8');
}

/**
 * Runs one tool call as REST runs the operation, in the same order: the workspace check, one hit
 * in the operation's own rate-limit bucket (so a tool call costs what the REST call costs, on top
 * of the gate's `mcp` hit), the permission, the parsing, the implementation.
 */
async function callTool(
  def: OperationRoute,
  runtime: SurfaceRuntime,
  caller: Caller,
  args: Record<string, unknown>,
  traceId: string,
  requestId: RequestId,
): Promise<CallToolResult> {
  try {
    const raw = splitToolArguments(def, args);
    const effective = await authorize(runtime, def, caller, (raw.params as { slug?: string }).slug);
    const parsed = parseOperationInput({ input: { ...def.input, body: def.input.body ?? NO_BODY } }, raw);
    const input = def.input.body ? parsed : { ...parsed, body: undefined };
    const impl = IMPLEMENTATIONS[def.operationId as TokenOperationId] as OperationImpl<TokenOperationId>;
    const result = (await impl(runtime.deps, effective, input as never)) as unknown;
    const structured =
      result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { done: true };
    // A page ends early when the function URL's response carrying it would pass the page budget (docs/behaviour.md#pagination).
    return toolResult(fitPage(structured, (r) => answerBytes(toolResult(r), requestId)));
  } catch (error) {
    const appError = isAppError(error)
      ? error
      : new AppError('InternalError', `Something went wrong on our side. Quote trace id ${traceId} to support.`);
    const problem = toProblem(appError, traceId, def.mcpTool ?? def.operationId);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem };
  }
}

/** A server with every tool, for one authenticated caller (stateless: one per request). */
export function createMcpServer(runtime: SurfaceRuntime, caller: Caller, traceId: string): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS });
  // Only token routes are tools (docs/architecture.md#route-kinds): the platform API and public routes are not.
  const byTool = new Map(
    (OPERATION_ROUTES as readonly OperationRoute[]).flatMap((def) =>
      def.auth === 'token' && def.mcpTool ? [[def.mcpTool, def] as const] : [],
    ),
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...MCP_TOOLS] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const def = byTool.get(request.params.name);
    // As the SDK's McpServer answers an unknown tool: a tool error, not a protocol error.
    if (!def) return { isError: true, content: [{ type: 'text', text: `MCP error -32602: Tool ${request.params.name} not found` }] };
    return callTool(def, runtime, caller, request.params.arguments ?? {}, traceId, extra.requestId);
  });
  return server;
}
