/**
 * The CDK bootstrap of the account and region: `cdk deploy` uploads the functions' code to the
 * bootstrap bucket and deploys through its roles, and the template asserts a minimum bootstrap
 * version (its `CheckBootstrapVersion` rule), which CloudFormation only tests once the deploy runs.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { errorName, type CheckResult, type Target } from './check';

const NAME = 'CDK bootstrap';

/** What the stage needs of the bootstrap (from its synthesized cloud assembly). */
export interface BootstrapRequirement {
  /** The lowest bootstrap version the stack and its assets need. */
  readonly version: number;
  /** The SSM parameter the bootstrap stack writes its version to. */
  readonly parameter: string;
}

/** The bootstrap stack's name (CDK's default; the SSM parameter is what deploys read). */
const TOOLKIT_STACK = 'CDKToolkit';

async function parameterVersion(ssm: SSMClient, name: string): Promise<number | undefined> {
  try {
    const { Parameter } = await ssm.send(new GetParameterCommand({ Name: name }));
    return Parameter?.Value === undefined ? undefined : Number(Parameter.Value);
  } catch (error) {
    if (errorName(error) === 'ParameterNotFound') return undefined;
    throw error;
  }
}

async function toolkitStack(cloudFormation: CloudFormationClient) {
  try {
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: TOOLKIT_STACK }));
    return Stacks?.[0];
  } catch (error) {
    if (errorName(error) === 'ValidationError') return undefined;
    throw error;
  }
}

/** Checks that the account and region are bootstrapped at the version the stage needs. */
export async function checkBootstrap(
  clients: { readonly ssm: SSMClient; readonly cloudFormation: CloudFormationClient },
  target: Target,
  required: BootstrapRequirement,
): Promise<CheckResult> {
  const fix = [`npx cdk bootstrap aws://${target.account}/${target.region} ${target.profileFlag}`.trim()];
  const needs = `this app needs ${required.version} or newer`;
  const version = await parameterVersion(clients.ssm, required.parameter);
  if (version === undefined) {
    const stack = await toolkitStack(clients.cloudFormation);
    return {
      name: NAME,
      status: 'fail',
      summary: stack
        ? `no ${required.parameter} parameter, but a ${TOOLKIT_STACK} stack in state ${stack.StackStatus}: the bootstrap is incomplete or uses another qualifier`
        : `${target.account}/${target.region} is not bootstrapped (no ${required.parameter} parameter, no ${TOOLKIT_STACK} stack)`,
      details: [`The deploy uploads the functions' code to the bootstrap bucket and deploys through the bootstrap roles; ${needs}.`],
      fix,
    };
  }
  if (!(version >= required.version)) {
    return {
      name: NAME,
      status: 'fail',
      summary: `bootstrap version ${version}; ${needs}`,
      details: ['Bootstrapping again with the CDK of this repository upgrades the bootstrap stack in place.'],
      fix,
    };
  }
  return { name: NAME, status: 'ok', summary: `version ${version} (${needs})` };
}
