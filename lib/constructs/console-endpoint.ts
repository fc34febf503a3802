/**
 * `/console` and `/console/{asset}` (docs/architecture.md#console): the web console is bundled
 * at synth into content-hashed files plus `index.html` (lib/console/console-bundle.ts), shipped
 * inside the console function's bundle (`$LAMBDA_TASK_ROOT/console/`). No authorizer: the page
 * holds no data; everything it shows comes from the authorized REST routes with the user's token.
 * The function is told which origins may frame the page (docs/behaviour.md#the-embedded-console)
 * and, with the stage's `consoleOidc`, the provider staff sign in with and the console's own address,
 * the redirect URI registered there (docs/behaviour.md#staff-sign-in).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack, Validations } from 'aws-cdk-lib';
import { AuthorizationType, LambdaIntegration, type Method, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import type { ConsoleOidcSettings } from '#lambdas/contract/console-oidc';
import { ENV } from '#lambdas/contract/deployment';
import { writeConsoleBundle, type ConsoleBundle } from '../console/console-bundle';
import { DEFAULT_CONFIG } from '../config';
import { functionEntry, ServiceFunction, type LogProps, type ServiceFunctionProps } from './service-function';

/** The public paths served by the console function. */
export const CONSOLE_PATHS = ['/console', '/console/{asset}'] as const;

/** The operation name of each console path's GET method. */
const OPERATION_NAMES: Readonly<Record<(typeof CONSOLE_PATHS)[number], string>> = {
  '/console': 'getConsole',
  '/console/{asset}': 'getConsoleAsset',
};

/** Properties of a {@link ConsoleEndpoint}. */
export interface ConsoleEndpointProps extends LogProps, Pick<ServiceFunctionProps, 'logGroup'> {
  /** The API the routes are added to (the console is same-origin with it). */
  readonly api: RestApi;
  /**
   * Origins whose pages may frame the console (the stage setting `consoleFrameAncestors`), handed
   * to the function as `CONSOLE_FRAME_ANCESTORS`. @default DEFAULT_CONFIG.consoleFrameAncestors (none)
   */
  readonly frameAncestors?: readonly string[];
  /**
   * The provider the platform's staff sign in with (the stage setting `consoleOidc`), handed to the
   * function as `CONSOLE_OIDC` with {@link ConsoleEndpointProps.consoleUrl} as `CONSOLE_URL`: the page
   * then offers "Sign in with <name>". @default DEFAULT_CONFIG.consoleOidc (none: token sign-in only)
   */
  readonly consoleOidc?: ConsoleOidcSettings | null;
  /** The console's address (`https://<api>/<stage>/console/`), the redirect URI of staff sign-in; needed with `consoleOidc`. */
  readonly consoleUrl?: string;
}

/** The console function and its two unauthenticated GET routes. */
export class ConsoleEndpoint extends Construct {
  /** The function serving the page and its assets. */
  readonly handler: ServiceFunction;
  /**
   * The files built at synth: the page's hashed script and stylesheet. Undefined when the
   * stack's bundling is skipped (the `aws:cdk:bundling-stacks` context, as in most CDK tests):
   * nothing would copy them into the function then.
   */
  readonly bundle?: ConsoleBundle;
  /** The GET methods of {@link CONSOLE_PATHS}, in that order. */
  readonly methods: readonly Method[];

  constructor(scope: Construct, id: string, props: ConsoleEndpointProps) {
    super(scope, id);

    // As in DocsEndpoint: NodejsFunction bundles synchronously while it is constructed,
    // so the built folder is only needed until then. When bundling is skipped nothing would
    // copy it, so the console is not built (the template is the same either way).
    const frameAncestors = props.frameAncestors ?? DEFAULT_CONFIG.consoleFrameAncestors;
    const consoleOidc = props.consoleOidc ?? DEFAULT_CONFIG.consoleOidc;
    if (consoleOidc && !props.consoleUrl) throw new Error('ConsoleEndpoint: consoleOidc needs the consoleUrl, the redirect URI');
    // Each unset when off: the function then answers frame-ancestors 'none' and offers token sign-in only.
    const environment: Record<string, string> = {
      ...(frameAncestors.length > 0 ? { [ENV.CONSOLE_FRAME_ANCESTORS]: JSON.stringify(frameAncestors) } : {}),
      ...(consoleOidc ? { [ENV.CONSOLE_OIDC]: JSON.stringify(consoleOidc), [ENV.CONSOLE_URL]: props.consoleUrl! } : {}),
    };
    const consoleDir = mkdtempSync(join(tmpdir(), 'webhooks-console-'));
    try {
      if (Stack.of(this).bundlingRequired) this.bundle = writeConsoleBundle(consoleDir);
      this.handler = new ServiceFunction(this, 'Function', {
        entry: functionEntry('serve-console'),
        description: 'Serves the web console at /console and its hashed assets',
        ...(Object.keys(environment).length > 0 ? { environment } : {}),
        logGroup: props.logGroup,
        logRetention: props.logRetention,
        logRemovalPolicy: props.logRemovalPolicy,
        // mkdtemp makes the folder private (0700); Lambda's runtime user must be able to read it.
        afterBundling: (outputDir) => [`cp -r "${consoleDir}" "${outputDir}/console"`, `chmod -R u=rwX,go=rX "${outputDir}/console"`],
      });
    } finally {
      rmSync(consoleDir, { recursive: true, force: true });
    }

    const integration = new LambdaIntegration(this.handler.function, { allowTestInvoke: false });
    this.methods = CONSOLE_PATHS.map((path) => {
      const method = props.api.root.resourceForPath(path).addMethod('GET', integration, {
        authorizationType: AuthorizationType.NONE,
        operationName: OPERATION_NAMES[path],
      });
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          "Public by design (docs/architecture.md#console): the console page and its hashed assets are static files with no workspace data; everything the page shows is fetched with the user's token from the authorized REST routes.",
      });
      return method;
    });
  }
}
