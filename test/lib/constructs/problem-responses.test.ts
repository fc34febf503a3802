/**
 * API Gateway's own answers (docs/behaviour.md#gateway-responses): every response type has its
 * own gateway response, none flattened by a default; each keeps its real status (API Gateway's
 * documented default, bar the two the module says why) with a problem+json body whose status and
 * tag match it; the 502 and 413 name the request-size limits with the texts the local front uses.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, ResponseType, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, GATEWAY_DETAILS, ProblemSchema } from '../../../lambdas/contract/errors';
import { addProblemGatewayResponses, GATEWAY_PROBLEMS } from '../../../lib/constructs/problem-responses';

/** API Gateway's documented default status of each response type ("Gateway response types for API Gateway"); null: none. */
const AWS_DEFAULT_STATUS: Record<string, number | null> = {
  ACCESS_DENIED: 403,
  API_CONFIGURATION_ERROR: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  AUTHORIZER_FAILURE: 500,
  BAD_REQUEST_PARAMETERS: 400,
  BAD_REQUEST_BODY: 400,
  DEFAULT_4XX: null,
  DEFAULT_5XX: null,
  EXPIRED_TOKEN: 403,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  INVALID_API_KEY: 403,
  INVALID_SIGNATURE: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  QUOTA_EXCEEDED: 429,
  REQUEST_TOO_LARGE: 413,
  RESOURCE_NOT_FOUND: 404,
  THROTTLED: 429,
  UNAUTHORIZED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  WAF_FILTERED: 403,
};

/** The statuses the module sets on purpose instead of the type's default. */
const OVERRIDES: Record<string, number> = {
  MISSING_AUTHENTICATION_TOKEN: 404,
  INTEGRATION_FAILURE: 502,
  DEFAULT_4XX: 400,
  DEFAULT_5XX: 502,
};

let template: Template;
beforeAll(() => {
  const stack = new Stack(new App(), 'Problems');
  const api = new RestApi(stack, 'Api');
  api.root.addMethod('GET', new MockIntegration());
  addProblemGatewayResponses(api);
  template = Template.fromStack(stack);
});

type GatewayResponseProps = { StatusCode: string; ResponseTemplates: Record<string, string> };
const responseOf = (type: string) => {
  const found = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }));
  expect(found, type).toHaveLength(1);
  return found[0]!.Properties as GatewayResponseProps;
};
const bodyOf = (props: GatewayResponseProps) =>
  ProblemSchema.strict().parse(
    JSON.parse(
      props.ResponseTemplates['application/json']!.replaceAll('$context.error.messageString', '"m"').replaceAll('$context.requestId', 'r'),
    ),
  );

describe('gateway responses', () => {
  it('cover every response type API Gateway defines, so none is answered by a default', () => {
    const cdkTypes = Object.values(ResponseType)
      .filter((t): t is ResponseType => t instanceof ResponseType)
      .map((t) => t.responseType)
      .sort();
    expect(cdkTypes).toEqual(Object.keys(AWS_DEFAULT_STATUS).sort());
    expect(GATEWAY_PROBLEMS.map((p) => p.type.responseType).sort()).toEqual(cdkTypes);
  });

  it.each(Object.entries(AWS_DEFAULT_STATUS))(
    '%s keeps its real status, and its body says the same status and a tag of it',
    (type, awsStatus) => {
      const props = responseOf(type);
      const expected = OVERRIDES[type] ?? awsStatus;
      expect(props.StatusCode).toBe(String(expected));
      const body = bodyOf(props);
      expect(body.status).toBe(expected);
      expect(ERROR_STATUS[body.tag]).toBe(expected);
    },
  );

  it('an integration timeout is a 504 GatewayTimeout, not a 500', () => {
    expect(bodyOf(responseOf('INTEGRATION_TIMEOUT'))).toMatchObject({
      status: 504,
      tag: 'GatewayTimeout',
      detail: GATEWAY_DETAILS.timeout,
    });
  });

  it('a request Lambda refuses, a failed invocation and a failed function are a 502 that names the 6 MB limit', () => {
    for (const type of ['INTEGRATION_FAILURE', 'DEFAULT_5XX']) {
      const body = bodyOf(responseOf(type));
      expect(body).toMatchObject({ status: 502, tag: 'BadGateway', detail: GATEWAY_DETAILS.noUsableAnswer });
      expect(body.detail).toContain('6291456');
    }
    expect(bodyOf(responseOf('REQUEST_TOO_LARGE'))).toMatchObject({
      status: 413,
      tag: 'PayloadTooLarge',
      detail: GATEWAY_DETAILS.requestTooLarge,
    });
  });

  it('no 5xx shows API Gateway message', () => {
    for (const type of [
      'API_CONFIGURATION_ERROR',
      'AUTHORIZER_CONFIGURATION_ERROR',
      'AUTHORIZER_FAILURE',
      'INTEGRATION_FAILURE',
      'INTEGRATION_TIMEOUT',
      'DEFAULT_5XX',
    ])
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseTemplates: { 'application/json': Match.not(Match.stringLikeRegexp('messageString')) },
      });
  });
});
