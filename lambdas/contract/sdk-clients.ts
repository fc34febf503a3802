/**
 * The AWS SDK clients a function loads only on first use, each with the environment variables that
 * let it: the composition root (lambdas/composition/runtime.ts) builds the SQS, EventBridge and KMS
 * adapters only from these variables, so a function given none of a client's variables can never
 * load that client. The CDK app bundles into each function exactly the clients its environment
 * lets it load (docs/scaling.md#the-aws-sdk-in-the-bundles); the environment is set together with
 * the grant by the construct that gives the function the resource.
 *
 * Dependency-free: the CDK app and the bench read it.
 */
import { ENV, type EnvName } from './deployment';

/** A client package the functions import only with `import()`, on first use. */
export type LazySdkClient = '@aws-sdk/client-sqs' | '@aws-sdk/client-eventbridge' | '@aws-sdk/client-kms';

/** Each lazily loaded client, with the variables whose adapters use it. */
export const LAZY_SDK_CLIENTS: { readonly [C in LazySdkClient]: readonly EnvName[] } = {
  // The delivery queues (both lanes, the dead letters: send and the retry delayer) and the jobs queue.
  '@aws-sdk/client-sqs': [ENV.DELIVERY_QUEUE_URL, ENV.SLOW_DELIVERY_QUEUE_URL, ENV.DEAD_LETTER_QUEUE_URL, ENV.JOB_QUEUE_URL],
  // The bus the outbox relay puts the service's own events on (docs/architecture.md#outbox).
  '@aws-sdk/client-eventbridge': [ENV.EVENT_BUS_NAME],
  // The secret sealer; unset, the sealer refuses without loading anything.
  '@aws-sdk/client-kms': [ENV.SECRETS_KEY_ID],
};

/** The lazily loaded clients a function with `environment` can load: those with one of their variables set. */
export function sdkClientsLoadableWith(environment: Readonly<Record<string, string | undefined>>): LazySdkClient[] {
  return (Object.keys(LAZY_SDK_CLIENTS) as LazySdkClient[]).filter((client) =>
    LAZY_SDK_CLIENTS[client].some((name) => environment[name] !== undefined && environment[name] !== ''),
  );
}
