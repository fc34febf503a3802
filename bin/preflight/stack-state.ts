/**
 * The state of the stage's stack: CloudFormation refuses an update while another operation runs
 * or after a rollback that failed, which it says only once the deploy starts.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { errorName, type CheckResult, type Target } from './check';

const NAME = 'Stack state';

/** Checks that the stage's stack is absent or in a state a deploy can start from. */
export async function checkStackState(clients: { readonly cloudFormation: CloudFormationClient }, target: Target): Promise<CheckResult> {
  const region = `--region ${target.region} ${target.profileFlag}`.trim();
  let status: string | undefined;
  try {
    const { Stacks } = await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: target.stackName }));
    status = Stacks?.[0]?.StackStatus;
  } catch (error) {
    if (errorName(error) !== 'ValidationError') throw error;
  }
  if (status === undefined) return { name: NAME, status: 'ok', summary: `${target.stackName} does not exist yet: the deploy creates it` };
  if (status.endsWith('_IN_PROGRESS'))
    return {
      name: NAME,
      status: 'fail',
      summary: `${target.stackName} is ${status}: another operation is running on it`,
      details: ['Wait for it to finish, then run the pre-flight again.'],
      fix: [`aws cloudformation wait stack-update-complete --stack-name ${target.stackName} ${region}`],
    };
  if (status === 'UPDATE_ROLLBACK_FAILED')
    return {
      name: NAME,
      status: 'fail',
      summary: `${target.stackName} is UPDATE_ROLLBACK_FAILED: CloudFormation takes no update until the rollback is finished`,
      details: ['The stack events say which resource could not be rolled back; fix that first.'],
      fix: [`aws cloudformation continue-update-rollback --stack-name ${target.stackName} ${region}`],
    };
  if (status === 'ROLLBACK_FAILED' || status === 'DELETE_FAILED')
    return {
      name: NAME,
      status: 'fail',
      summary: `${target.stackName} is ${status}: it never deployed, or its deletion stopped half way`,
      details: ['Delete it (retained resources such as the table stay), then deploy again. The stack events say what failed.'],
      fix: [`aws cloudformation delete-stack --stack-name ${target.stackName} ${region}`],
    };
  if (status === 'ROLLBACK_COMPLETE')
    return {
      name: NAME,
      status: 'ok',
      summary: `${target.stackName} is ROLLBACK_COMPLETE (a failed first deploy): cdk deploy deletes it and creates it again`,
    };
  return { name: NAME, status: 'ok', summary: `${target.stackName} is ${status}: the deploy updates it` };
}
