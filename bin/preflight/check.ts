/**
 * What every pre-flight check returns, and how the checks read the synthesized template.
 */
import type { StackTemplate, TemplateResource } from '../../lib/synth-template';

/**
 * `ok`: ready. `fail`: the deploy would fail (or roll back), so the pre-flight exits 1.
 * `warn`: the deploy would succeed but a setting asks for more than the account gives.
 */
type CheckStatus = 'ok' | 'warn' | 'fail';

/** The outcome of one check, as the pre-flight prints it. */
export interface CheckResult {
  /** The check's name, e.g. `CDK bootstrap`. */
  readonly name: string;
  readonly status: CheckStatus;
  /** One line: what was found. */
  readonly summary: string;
  /** Further lines: what is wrong and what to do, in words. */
  readonly details?: readonly string[];
  /** The commands that fix it, one per line, to copy as they are. */
  readonly fix?: readonly string[];
}

/** Where the stage is being deployed, as the checks need it in their messages and fix commands. */
export interface Target {
  readonly account: string;
  readonly region: string;
  /** `aws`, `aws-cn`, `aws-us-gov`: for the ARNs of fix commands. */
  readonly partition: string;
  /** The stage's stack name (`Webhooks-<stage>`). */
  readonly stackName: string;
  /** `--profile <name> ` when one was given (with its trailing space), else `''`: appended to fix commands. */
  readonly profileFlag: string;
}

/** The resources of a template of one CloudFormation type, as [logical id, resource]. */
export function resourcesOfType(template: StackTemplate, type: string): [string, TemplateResource][] {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/**
 * A template value as the string CloudFormation will make of it in `target`'s account and region, when
 * it is fixed there: a literal, or an `Fn::Join` of literals and the pseudo parameters
 * `AWS::Region`, `AWS::AccountId`, `AWS::Partition`, `AWS::StackName`. Undefined for anything that
 * depends on another resource (a generated name, unique by construction).
 */
export function fixedString(value: unknown, target: Target): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === 'string') {
    const pseudo: Record<string, string> = {
      'AWS::Region': target.region,
      'AWS::AccountId': target.account,
      'AWS::Partition': target.partition,
      'AWS::StackName': target.stackName,
      'AWS::URLSuffix': target.partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com',
    };
    return pseudo[ref];
  }
  const join = (value as { 'Fn::Join'?: unknown })['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    const parts = (join[1] as unknown[]).map((part) => fixedString(part, target));
    return parts.every((p): p is string => p !== undefined) ? parts.join(join[0]) : undefined;
  }
  return undefined;
}

/** The error name of an AWS SDK error (`ResourceNotFoundException`, `ValidationError`, ...). */
export const errorName = (error: unknown): string => (error instanceof Error ? error.name : '');
