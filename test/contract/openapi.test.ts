import { describe, expect, it } from 'vitest';
import { builtInCatalogue } from '../../lambdas/contract/events';
import { buildOpenApiDocument } from '../../lambdas/contract/openapi';
import { declaredErrors, OPERATIONS } from '../../lambdas/contract/operations';
import { ERROR_STATUS } from '../../lambdas/contract/errors';

const doc = buildOpenApiDocument({ eventTypes: builtInCatalogue() }) as any;

describe('the OpenAPI document generated from the contract', () => {
  it('is OpenAPI 3.1 with bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it.each(OPERATIONS.map((o) => [o.operationId, o] as const))('declares %s with its path, status, errors and security', (_id, op) => {
    const entry = doc.paths[op.path][op.method.toLowerCase()];
    expect(entry.operationId).toBe(op.operationId);
    expect(entry.summary).toBe(op.summary);
    expect(entry.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(entry.responses)).toContain(String(op.successStatus));
    for (const tag of declaredErrors(op)) {
      expect(entry.responses[String(ERROR_STATUS[tag])].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/Problem');
    }
  });

  it('declares exactly WorkspaceNotFound, InternalError, Unauthorized, RateLimited on the overview (spec §4)', () => {
    const overview = OPERATIONS.find((o) => o.operationId === 'getWorkspaceOverview')!;
    expect(declaredErrors(overview).sort()).toEqual(['InternalError', 'RateLimited', 'Unauthorized', 'WorkspaceNotFound']);
    expect(Object.keys(doc.paths['/workspaces/{slug}/overview'].get.responses).sort()).toEqual(['200', '401', '404', '429', '500']);
  });

  it('lists the event catalogue under webhooks', () => {
    expect(Object.keys(doc.webhooks)).toEqual(builtInCatalogue().map((t) => t.name));
    expect(doc.webhooks['webhook.test_event'].post.requestBody.content['application/json'].schema.properties.eventType).toEqual({ type: 'string', enum: ['webhook.test_event'] });
  });

  it('has unique operation ids and MCP tool names', () => {
    expect(new Set(OPERATIONS.map((o) => o.operationId)).size).toBe(OPERATIONS.length);
    expect(new Set(OPERATIONS.map((o) => o.mcpTool)).size).toBe(OPERATIONS.length);
  });
});
