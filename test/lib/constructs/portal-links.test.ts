/**
 * Portal links in CDK (lib/constructs/operation-resources.ts `portalLinks`, lib/constructs/rest-api.ts):
 * the functions that mint a link (the workspace route, the platform route and MCP) learn the
 * console's address, built from the API's id and stage without a dependency cycle, and the stage's
 * `consoleFrameAncestors`, which also reach the console's own function; no other function gets them.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV } from '../../../lambdas/contract/deployment';
import { parseConfig } from '../../../lib/config';
import { WebhooksStack } from '../../../lib/webhooks-stack';
import { buildTestStack, removeTestOutput } from '../synth';

const ORIGIN = 'https://app.example.com';
const built = buildTestStack();
afterAll(() => removeTestOutput(built.app));
const stack = new WebhooksStack(built.app, 'PortalLinks', { config: { ...parseConfig({}), consoleFrameAncestors: [ORIGIN] } });
const template = Template.fromStack(stack);

type Fn = { Properties: { Description?: string; Environment?: { Variables?: Record<string, unknown> } } };
const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Fn[];
const variables = (fn: Fn) => fn.Properties.Environment?.Variables ?? {};
const described = (start: string) => functions.filter((f) => (f.Properties.Description ?? '').startsWith(start));

describe('portal links in the stack', () => {
  it("gives the link-minting functions the console's address, from the API's id and the stage", () => {
    const minting = [
      ...described('POST /workspaces/{slug}/portal-sessions:'),
      ...described('POST /platform/workspaces/{slug}/portal-sessions:'),
      ...described('MCP'),
    ];
    expect(minting).toHaveLength(3);
    const apiId = Object.keys(template.findResources('AWS::ApiGateway::RestApi'))[0]!;
    for (const fn of minting) {
      const url = JSON.stringify(variables(fn)[ENV.CONSOLE_URL]);
      expect(url).toContain(`"Ref":"${apiId}"`);
      expect(url).toContain('.execute-api.');
      expect(url).toContain('/dev/console/');
      expect(variables(fn)[ENV.CONSOLE_FRAME_ANCESTORS]).toBe(JSON.stringify([ORIGIN]));
    }
    // No other operation function carries them.
    const others = functions.filter((f) => !minting.includes(f) && ENV.CONSOLE_URL in variables(f));
    expect(others).toEqual([]);
  });

  it("frames the console for the stage's origins", () => {
    const [consoleFn] = described('Serves the web console');
    expect(variables(consoleFn!)[ENV.CONSOLE_FRAME_ANCESTORS]).toBe(JSON.stringify([ORIGIN]));
    // The console's function and the three link minters, no other.
    const withAncestors = functions.filter((f) => variables(f)[ENV.CONSOLE_FRAME_ANCESTORS] === JSON.stringify([ORIGIN]));
    expect(withAncestors).toHaveLength(4);
  });
});
