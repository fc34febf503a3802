/**
 * The MCP server (docs/architecture.md#mcp-endpoint): one function behind its own function URL. The URL
 * has no AWS auth (MCP clients send a workspace API token, not SigV4): the
 * function verifies the `Authorization: Bearer` token with the same token
 * store, scopes and permission checks as REST and counts each request in the
 * `mcp` rate-limit bucket (lambdas/mcp/gate.ts). Since anyone can invoke the URL,
 * the function has reserved concurrency (`mcpReservedConcurrency`): a flood is
 * throttled by Lambda rather than billed and spread over the account's
 * concurrency, and no browser origin is allowed unless configured. Each tool runs a contract
 * operation, so the function gets the union of what the operations use, derived
 * from the contract exactly as the REST functions' needs are; nothing here
 * names an operation.
 */
import { Duration } from 'aws-cdk-lib';
import { FunctionUrlAuthType, HttpMethod, InvokeMode, type CfnFunction, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { TOKEN_OPERATIONS } from '#lambdas/contract/operations';
import { MCP_CORS } from '#lambdas/contract/deployment';
import type { Quota, RateLimitBucket } from '#lambdas/contract/rate-limits';
import type { WorkspaceLimits } from '#lambdas/contract/limits';
import {
  bindOperationResources,
  grantOperationTableAccess,
  operationEnvironment,
  resourcesUsedBy,
  type OperationResources,
} from './operation-resources';
import { DEFAULT_CONFIG } from '../config';
import { functionEntry, ServiceFunction, type LogProps } from './service-function';
import type { ServiceTable } from './table';

/** The rate-limit bucket every MCP request is counted in (before any tool runs). */
const MCP_RATE_LIMIT_BUCKET: RateLimitBucket = 'mcp';

/**
 * The function URL's CORS, except the origins (configuration), from the one list
 * of lambdas/contract/deployment.ts. Lambda adds these headers to the URL's responses and,
 * for a preflight, they take precedence over the function's own OPTIONS answer.
 * The function adds no CORS header to a POST answer, so none is doubled.
 */
const MCP_URL_CORS = {
  allowedMethods: MCP_CORS.allowedMethods.map((m) => HttpMethod[m]),
  allowedHeaders: [...MCP_CORS.allowedHeaders],
  exposedHeaders: [...MCP_CORS.exposedHeaders],
  maxAge: Duration.seconds(MCP_CORS.maxAgeSeconds),
};

/** The MCP function's timeout: a tool call is one operation (as a REST call is), plus the MCP handshake, with room for a cold start. */
const MCP_TIMEOUT = Duration.seconds(30);

/** The MCP function's memory: the MCP SDK, zod schemas of every tool and every operation in one bundle. */
const MCP_MEMORY_MB = 512;

/** Properties of an {@link McpEndpoint}. */
export interface McpEndpointProps extends OperationResources, LogProps {
  /** The service table (token lookup, rate-limit counters, every operation's items). */
  readonly table: ServiceTable;
  /** Per-token quotas, handed to the function as `RATE_LIMITS` (its `mcp` bucket applies). @default DEFAULT_QUOTAS */
  readonly quotas?: Readonly<Record<RateLimitBucket, Quota>>;
  /** Per-workspace limits (the stage's `workspaceLimits`), handed to the function as `WORKSPACE_LIMITS`. @default DEFAULT_WORKSPACE_LIMITS */
  readonly workspaceLimits?: WorkspaceLimits;
  /** Origins browsers may call the URL from (CORS); `[]` for none. @default DEFAULT_CONFIG.mcpAllowedOrigins (none) */
  readonly allowedOrigins?: readonly string[];
  /** The function's reserved concurrency; `null` for none. @default DEFAULT_CONFIG.mcpReservedConcurrency */
  readonly reservedConcurrency?: number | null;
}

/** The MCP function and its public function URL. */
export class McpEndpoint extends Construct {
  /** The MCP server's function (`lambdas/functions/mcp.ts`). */
  readonly handler: ServiceFunction;
  /** The function URL MCP clients connect to. */
  readonly functionUrl: FunctionUrl;

  constructor(scope: Construct, id: string, props: McpEndpointProps) {
    super(scope, id);
    // Only token routes are tools (docs/architecture.md#route-kinds).
    const operations = TOKEN_OPERATIONS;

    // Every tool runs an operation: the union of what they use, from the contract.
    const resources = bindOperationResources(resourcesUsedBy(operations), props, 'An MCP tool', 'McpEndpoint');
    this.handler = new ServiceFunction(this, 'Function', {
      entry: functionEntry('mcp'),
      description: 'MCP server (Streamable HTTP, stateless): every contract operation as a tool, behind a workspace API token',
      environment: { ...operationEnvironment(props.table, props.quotas, props.workspaceLimits), ...resources.environment },
      timeout: MCP_TIMEOUT,
      memorySize: MCP_MEMORY_MB,
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
    });
    const reserved = props.reservedConcurrency === undefined ? DEFAULT_CONFIG.mcpReservedConcurrency : props.reservedConcurrency;
    // On the L1 resource, as the publisher's (lib/constructs/delivery-pipeline.ts): ServiceFunction has no such property.
    if (reserved !== null) (this.handler.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions = reserved;
    resources.grant(this.handler.role);
    // Every tool's table access (lib/constructs/function-access.ts), and the token lookup by hash
    // (its gate authenticates each request itself).
    grantOperationTableAccess(props.table, this.handler.role, operations, MCP_RATE_LIMIT_BUCKET);
    props.table.grantTokenLookup(this.handler.role);

    const allowedOrigins = [...(props.allowedOrigins ?? DEFAULT_CONFIG.mcpAllowedOrigins)];
    this.functionUrl = this.handler.function.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      // The server answers each POST with one JSON body (enableJsonResponse), never a stream.
      invokeMode: InvokeMode.BUFFERED,
      // No origins: the CORS configuration stays, without AllowOrigins (CloudFormation refuses an
      // empty list), so no answer carries access-control-allow-origin and browsers refuse to call.
      cors: { ...(allowedOrigins.length > 0 ? { allowedOrigins } : {}), ...MCP_URL_CORS },
    });
  }
}
