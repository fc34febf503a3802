/** Lambda entry of the API Gateway TOKEN authorizer. */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { allowPolicy } from '../http/authorizer';
import { resolveCaller } from '../operations/access';
import { defaultRuntime } from '../composition/runtime';

/** Allows a known token (context: workspace, token id, scopes); anything else is 401. */
export async function handler(event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const caller = await resolveCaller(defaultRuntime().deps.table, event.authorizationToken);
  // API Gateway answers 401 (our UNAUTHORIZED gateway response) for exactly this error message.
  if (!caller) throw new Error('Unauthorized');
  return allowPolicy(caller, event.methodArn);
}
