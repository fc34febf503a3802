/**
 * The account's API Gateway CloudWatch role. The stage writes access logs, and API Gateway writes
 * them through one role per account and region (its account settings); without one, CloudFormation
 * rolls the deploy back ("CloudWatch Logs role ARN must be set in account settings"). The stage
 * setting `apiGatewayAccountRole` makes the stack own that role instead: the template then holds an
 * `AWS::ApiGateway::Account`.
 */
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import type { StackTemplate } from '../../lib/synth-template';
import { resourcesOfType, type CheckResult, type Target } from './check';

const NAME = 'API Gateway CloudWatch role';

/** The role name the fix commands create (any name works: the account setting holds its ARN). */
const API_GATEWAY_ROLE_NAME = 'APIGatewayCloudWatchLogs';

/** True when a stage of the template writes access logs or execution logs. */
function writesLogs(template: StackTemplate): boolean {
  return resourcesOfType(template, 'AWS::ApiGateway::Stage').some(([, stage]) => {
    const props = stage.Properties ?? {};
    const methods = (props.MethodSettings as { LoggingLevel?: string }[] | undefined) ?? [];
    return props.AccessLogSetting !== undefined || methods.some((m) => m.LoggingLevel !== undefined && m.LoggingLevel !== 'OFF');
  });
}

/** The commands that create the role and make it the account's (`target`'s account and region). */
export function apiGatewayRoleCommands(target: Target): string[] {
  const flags = `--region ${target.region} ${target.profileFlag}`.trim();
  const profile = target.profileFlag.trim();
  const iam = (args: string) => `aws iam ${args}${profile ? ` ${profile}` : ''}`;
  const trust = JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' }, Action: 'sts:AssumeRole' }],
  });
  const arn = `arn:${target.partition}:iam::${target.account}:role/${API_GATEWAY_ROLE_NAME}`;
  return [
    iam(`create-role --role-name ${API_GATEWAY_ROLE_NAME} --assume-role-policy-document '${trust}'`),
    iam(
      `attach-role-policy --role-name ${API_GATEWAY_ROLE_NAME} --policy-arn arn:${target.partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs`,
    ),
    `aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=${arn} ${flags}`,
  ];
}

/** Checks that API Gateway can write the stage's logs: the account has a role, or the stack brings one. */
export async function checkApiGatewayRole(
  clients: { readonly apiGateway: APIGatewayClient },
  target: Target,
  template: StackTemplate,
): Promise<CheckResult> {
  if (!writesLogs(template)) return { name: NAME, status: 'ok', summary: 'not needed: the stage writes no API Gateway logs' };
  const { cloudwatchRoleArn } = await clients.apiGateway.send(new GetAccountCommand({}));
  if (resourcesOfType(template, 'AWS::ApiGateway::Account').length > 0) {
    return {
      name: NAME,
      status: 'ok',
      summary: cloudwatchRoleArn
        ? `the stack sets the account's role (apiGatewayAccountRole), in place of ${cloudwatchRoleArn}, for every REST API of ${target.region}`
        : `the stack sets the account's role (apiGatewayAccountRole), for every REST API of ${target.region}`,
    };
  }
  if (cloudwatchRoleArn) return { name: NAME, status: 'ok', summary: `the account's role is ${cloudwatchRoleArn}` };
  return {
    name: NAME,
    status: 'fail',
    summary: `the account has no API Gateway CloudWatch role in ${target.region}, and the stage writes access logs`,
    details: [
      'CloudFormation would roll the deploy back: "CloudWatch Logs role ARN must be set in account settings".',
      'Either let this stack own the role: deploy with -c apiGatewayAccountRole=true (account-wide: every REST API',
      'of the region then logs through it; it is retained when the stack is deleted), or set one once for the account and region:',
    ],
    fix: apiGatewayRoleCommands(target),
  };
}
