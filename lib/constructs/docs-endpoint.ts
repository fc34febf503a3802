/**
 * `/openapi.json`, `/reference` and `/reference/{asset}` (docs/architecture.md#reference-documents): the
 * OpenAPI document is generated from the contract at synth, written with the
 * reference UI assets into a folder, and shipped inside the docs function's
 * bundle (`$LAMBDA_TASK_ROOT/docs/`). No authorizer: the documents are public.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { AuthorizationType, LambdaIntegration, type Method, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { writeDocsBundle } from '../docs/docs-bundle';
import { functionEntry, ServiceFunction, type LogProps, type ServiceFunctionProps } from './service-function';

/** The public paths served by the docs function. */
export const DOCS_PATHS = ['/openapi.json', '/reference', '/reference/{asset}'] as const;

/** Properties of a {@link DocsEndpoint}. */
export interface DocsEndpointProps extends LogProps, Pick<ServiceFunctionProps, 'logGroup'> {
  /** The API the routes are added to. */
  readonly api: RestApi;
}

/** The docs function and its three unauthenticated GET routes. */
export class DocsEndpoint extends Construct {
  /** The function serving the documents. */
  readonly handler: ServiceFunction;
  /** The OpenAPI document generated at synth (the one served at `/openapi.json`). */
  readonly document: Readonly<Record<string, unknown>>;
  /** The GET methods of {@link DOCS_PATHS}. */
  readonly methods: readonly Method[];

  constructor(scope: Construct, id: string, props: DocsEndpointProps) {
    super(scope, id);

    // The bundle is staged while the function is constructed (NodejsFunction
    // bundles synchronously), so the folder is only needed until then.
    const docsDir = mkdtempSync(join(tmpdir(), 'webhooks-docs-'));
    try {
      this.document = writeDocsBundle(docsDir);
      this.handler = new ServiceFunction(this, 'Function', {
        entry: functionEntry('serve-docs'),
        description: 'Serves /openapi.json and the /reference UI',
        logGroup: props.logGroup,
        logRetention: props.logRetention,
        logRemovalPolicy: props.logRemovalPolicy,
        // mkdtemp makes the folder private (0700); Lambda's runtime user must be able to read it.
        afterBundling: (outputDir) => [`cp -r "${docsDir}" "${outputDir}/docs"`, `chmod -R u=rwX,go=rX "${outputDir}/docs"`],
      });
    } finally {
      rmSync(docsDir, { recursive: true, force: true });
    }

    const integration = new LambdaIntegration(this.handler.function, { allowTestInvoke: false });
    this.methods = DOCS_PATHS.map((path) => {
      const method = props.api.root.resourceForPath(path).addMethod('GET', integration, {
        authorizationType: AuthorizationType.NONE,
        operationName: path === '/openapi.json' ? 'getOpenApiDocument' : path === '/reference' ? 'getReference' : 'getReferenceAsset',
      });
      Validations.of(method).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Public by design (docs/architecture.md#reference-documents): the OpenAPI document and the reference UI are read before a client has a token; they hold no workspace data.',
      });
      return method;
    });
  }
}
