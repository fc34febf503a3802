/**
 * The resources the stage's stack has now, read once and shared by the checks that ask whether a
 * name or a function is already this stack's.
 */
import { CloudFormationClient, ListStackResourcesCommand, type StackResourceSummary } from '@aws-sdk/client-cloudformation';
import { errorName } from './check';

/**
 * The stack's resources (every page: `DescribeStackResources` stops at 100), or `[]` when the stack
 * does not exist yet (CloudFormation answers `ValidationError`: "Stack with id … does not exist").
 */
export async function listStackResources(cloudFormation: CloudFormationClient, stackName: string): Promise<StackResourceSummary[]> {
  const out: StackResourceSummary[] = [];
  let NextToken: string | undefined;
  try {
    do {
      const page = await cloudFormation.send(new ListStackResourcesCommand({ StackName: stackName, NextToken }));
      out.push(...(page.StackResourceSummaries ?? []));
      NextToken = page.NextToken;
    } while (NextToken);
  } catch (error) {
    if (errorName(error) === 'ValidationError' && /does not exist/.test((error as Error).message)) return [];
    throw error;
  }
  return out;
}
