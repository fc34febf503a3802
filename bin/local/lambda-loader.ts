/**
 * Loads a Lambda entry of `lambdas/functions/` by file name, once, as Lambda would: the local stack
 * runs the real handlers, so it reaches the runtime through its entries (docs/architecture.md#layers).
 */
import { asInvocation } from './aws-call-recorder';

const cache = new Map<string, Promise<unknown>>();

/**
 * The `handler` export of `lambdas/functions/<file>.ts`; each call runs as an invocation of that
 * function, so the AWS calls it makes are recorded as its own (./aws-call-recorder.ts).
 */
export async function loadHandler<T>(file: string): Promise<T> {
  if (!cache.has(file))
    cache.set(
      file,
      import(`#lambdas/functions/${file}`).then((mod: { handler: (...args: unknown[]) => unknown }) => {
        const handler = mod.handler;
        return (...args: unknown[]) => asInvocation(file, () => handler(...args));
      }),
    );
  return (await cache.get(file)) as T;
}

/** A Lambda context for local invocations. */
export function lambdaContext(name: string, requestId: string): import('aws-lambda').Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
