/**
 * Builds the CDK app: the typed configuration from context and the stage's settings file, the
 * stack, and cdk-nag's AwsSolutions checks. `bin/webhooks.ts` runs it; the tests build the
 * same app, so what they check is what `cdk synth` produces.
 */
import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadStageConfig, type WebhooksConfig } from './config';
import { WebhooksStack } from './webhooks-stack';

/** The stack id (and CloudFormation stack name) of a stage. */
export function stackIdOf(stage: string): string {
  return `Webhooks-${stage}`;
}

/** What {@link createWebhooksApp} built. */
export interface WebhooksApp {
  readonly app: App;
  readonly config: WebhooksConfig;
  /** The stage's settings file (`stages/<stage>.json`) the configuration was read with; null when it has none. */
  readonly stageFile: string | null;
  readonly stack: WebhooksStack;
}

/**
 * Creates the app with its stack and the cdk-nag AwsSolutions checks. Errors
 * fail synth; each acknowledgement lives next to the construct it concerns,
 * with its reason. `projectRoot` is where `stages/` and cdk.json are (tests point it elsewhere).
 */
export function createWebhooksApp(props: AppProps = {}, projectRoot?: string): WebhooksApp {
  const app = new App(props);
  const { config, stageFile } = loadStageConfig(app, projectRoot);
  const stack = new WebhooksStack(app, stackIdOf(config.stage), {
    config,
    description: `Outbound webhook delivery service (${config.stage})`,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, config, stageFile, stack };
}
