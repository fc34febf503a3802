/**
 * The grants the IAM journey leaves unused, each with the reason it stays (docs/architecture.md#the-iam-check):
 * a path of the function's code the journey cannot reach on the local stack in a test's time.
 * The journey test fails when a grant is unused and not listed here, and when a listed one is used
 * or no longer granted, so the list is always exactly the unused grants.
 */

/** `<function> <action>` → why the function keeps the grant. */
export const JUSTIFIED_UNUSED_GRANTS: Readonly<Record<string, string>> = {
  'cancel-job dynamodb:DeleteItem':
    "Cancelling a job that is still running finishes it, freeing its endpoint's recovery slot; the journey's job has finished before the cancel.",
  'cancel-job dynamodb:PutItem':
    'Cancelling a job that is still running writes its audit entry in the same transaction; the journey cancels a finished job.',
  'create-api-token dynamodb:Query':
    "The workspace's token count is counted once from its items while its counter item is absent; the journey's workspace already has it.",
  'revoke-api-token dynamodb:Query':
    "The workspace's token count is counted once from its items while its counter item is absent; the journey's workspace already has it.",
  'platform-create-workspace dynamodb:GetItem':
    "On a taken slug, the workspace is read to say whether it is being erased; the journey's platform workspace is new.",
  'platform-update-workspace dynamodb:GetItem':
    "On a refused rename, the workspace is read to say whether it is missing or being erased; the journey's rename succeeds.",
  'dispatcher dynamodb:ConditionCheckItem':
    'A failure streak disables the endpoint, on the condition it is still the one read; a streak takes days of failures (docs/behaviour.md).',
  'dispatcher dynamodb:DeleteItem': 'Disabling an endpoint after a failure streak deletes its subscriptions.',
  'dispatcher sqs:ChangeMessageVisibility':
    "The fast lane's backoff; the journey's failing endpoint is moved to the slow lane at its first failure, whose backoff the slow dispatcher makes.",
  'slow-dispatcher dynamodb:ConditionCheckItem': "As the dispatcher's: disabling an endpoint after a failure streak.",
  'slow-dispatcher dynamodb:DeleteItem': "As the dispatcher's: disabling an endpoint deletes its subscriptions.",
  'dead-letter sqs:SendMessage':
    "A message the queue gave up on with retries left goes back to the delivery queue; the journey's dead letter has spent its retries.",
  'pending-repair dynamodb:BatchGetItem':
    "Reads the summaries of deliveries stuck pending past the repair's age; the journey's deliveries are all recorded within seconds.",
  'pending-repair dynamodb:BatchWriteItem':
    'Removes the rows of a stuck pending delivery whose endpoint was deleted; the journey has none stuck.',
  'pending-repair sqs:SendMessage': 'Sends a stuck pending delivery again; the journey has none.',
  'recovery-worker dynamodb:ConditionCheckItem':
    "Each replay of a job checks, in its transaction, that its endpoint is unchanged; the journey's recovery jobs replay nothing (the failing endpoint's one failed delivery has a replay already, and that replay is still retrying).",
  'rotate-webhook-secret dynamodb:DeleteItem':
    'A rotation that leaves no previous secret in a grace window deletes its grace entry; a rotation of the journey keeps one.',
  'retention dynamodb:BatchWriteItem': "Deletes expired log entries in batches; the journey's entries are minutes old.",
  'secret-expiry dynamodb:DeleteItem':
    "Deletes the grace entry of a rotated secret whose grace window ended; the journey's rotation is inside its window.",
  'secret-expiry dynamodb:GetItem': 'Reads the endpoint of a grace entry whose window ended; the journey has none.',
  'secret-expiry dynamodb:UpdateItem': "Drops the previous secret once its grace window ended; the journey's has not.",
};
