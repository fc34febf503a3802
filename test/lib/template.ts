/**
 * Reading a synthesized template in the CDK tests: resources by the logical id
 * of the construct that made them, a function's role statements and its
 * environment.
 */
import { Stack, type CfnElement } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import type { ServiceFunction } from '../../lib/constructs/service-function';

/** A resource of the template. */
export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** A statement of an IAM policy document. */
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
}

/** The resources of a template, by logical id. */
export const resourcesOf = (template: Template) => template.toJSON().Resources as Record<string, Resource>;

/** The logical id of a construct's default child (the resource it stands for). */
export const logicalId = (element: IConstruct) => Stack.of(element).getLogicalId(element.node.defaultChild as CfnElement);

/** The resources of one type, as [logical id, resource]. */
export const ofType = (template: Template, type: string) => Object.entries(resourcesOf(template)).filter(([, r]) => r.Type === type);

/** A statement's actions, as a list. */
export const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The statements of the policies attached to the role of logical id `roleId`. */
export function statementsOfRole(template: Template, roleId: string): Statement[] {
  return ofType(template, 'AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** The statements of a function's role policy. */
export const statementsOf = (template: Template, fn: ServiceFunction) => statementsOfRole(template, logicalId(fn.role));

/** The DynamoDB statements of a function. */
export const dynamoStatements = (template: Template, fn: ServiceFunction) =>
  statementsOf(template, fn).filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));

/** The properties of the resource a construct stands for. */
export const propertiesOf = (template: Template, element: IConstruct) => resourcesOf(template)[logicalId(element)]!.Properties;

/** A function's environment variables. */
export const variablesOf = (template: Template, fn: ServiceFunction) =>
  (propertiesOf(template, fn.function).Environment as { Variables: Record<string, unknown> }).Variables;
