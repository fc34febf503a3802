/**
 * `npm run preflight` end to end: the command line, the in-process synth of the stage with its
 * settings, the AWS clients the script makes (answering from a mocked account), the printed report
 * and the exit code; and the script itself as a child process, where no credentials exist.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../bin/preflight/run';
import { synthesizeStage, type SynthesizedStage } from '../../lib/synth-template';
import { ACCOUNT, REGION, setAccount } from './preflight-account';

const run = promisify(execFile);

/** The stage synthesized once per set of settings (the script synthesizes on every run; the tests share). */
const synthesized = new Map<string, SynthesizedStage>();
const synthesize = (context: Readonly<Record<string, string>>) => {
  const key = JSON.stringify(context);
  if (!synthesized.has(key)) synthesized.set(key, synthesizeStage(context));
  return synthesized.get(key)!;
};

/** Runs the pre-flight's main with `args`; its exit code and printed lines. */
async function preflight(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await main(args, { synthesize, print: (line) => lines.push(...line.split('\n')) });
  return { code, lines };
}

describe('npm run preflight', () => {
  it('prints one ok line per check and exits 0 in a ready account', { timeout: 300_000 }, async () => {
    setAccount();
    const { code, lines } = await preflight('--region', REGION, '-c', 'stage=prod');
    expect(lines[0]).toBe(`Pre-flight of Webhooks-prod (stage prod) in account ${ACCOUNT}, region ${REGION}`);
    expect(lines.slice(1, -1).map((l) => l.slice(0, 6) + l.slice(6).split(':')[0])).toEqual([
      'ok    Stack state',
      'ok    CDK bootstrap',
      'ok    API Gateway CloudWatch role',
      'ok    Lambda concurrency',
      'ok    Fixed names',
      'ok    Service quotas',
    ]);
    expect(lines.at(-1)).toBe('Ready to deploy.');
    expect(code).toBe(0);
  });

  it(
    'fails in a new account (no CloudWatch role, 10 concurrent executions), printing each fix; the stage setting clears one',
    { timeout: 300_000 },
    async () => {
      setAccount({ cloudwatchRoleArn: null, concurrency: { limit: 10, unreserved: 10 } });
      const failed = await preflight('--region', REGION, '-c', 'stage=prod');
      expect(failed.code).toBe(1);
      const text = failed.lines.join('\n');
      expect(text).toContain('FAIL  API Gateway CloudWatch role: the account has no API Gateway CloudWatch role in eu-west-1');
      expect(text).toContain('        aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=');
      expect(text).toContain('FAIL  Lambda concurrency: the stage reserves 60');
      expect(text).toContain('-c mcpReservedConcurrency=null -c publisherReservedConcurrency=null');
      expect(text).toContain('        aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384');
      expect(failed.lines.at(-1)).toMatch(/^Not ready: 2 checks failed \(1 warning: .*\)\. Fix them, then run the pre-flight again\.$/);

      setAccount({ concurrency: { limit: 10, unreserved: 10 } });
      const unreserved = await preflight(
        '--region',
        REGION,
        '-c',
        'stage=prod',
        '-c',
        'mcpReservedConcurrency=null',
        '-c',
        'publisherReservedConcurrency=null',
      );
      expect(unreserved.lines.join('\n')).toContain('ok    Lambda concurrency: no reservation');
      expect(unreserved.lines.at(-1)).toMatch(/^Ready to deploy \(1 warning/);
      expect(unreserved.code).toBe(0);
    },
  );

  it('stops on an invalid setting or argument before calling AWS', async () => {
    setAccount();
    const invalid = await preflight('--region', REGION, '-c', 'logRetentionDays=31');
    expect(invalid).toMatchObject({ code: 1, lines: expect.arrayContaining([expect.stringContaining('logRetentionDays')]) });
    const unknown = await preflight('--require-approval', 'never');
    expect(unknown.code).toBe(1);
    expect(unknown.lines[0]).toBe("unknown argument --require-approval (npm run deploy passes cdk deploy's own flags on)");
    expect((await preflight('-c', 'stage')).lines[0]).toBe('-c takes key=value, not "stage"');
    expect((await preflight('--help')).code).toBe(0);
  });

  it('runs as a script: without credentials it says so and exits 1', { timeout: 300_000 }, async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_NO_WARNINGS: '1',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    for (const key of [
      'AWS_PROFILE',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_WEB_IDENTITY_TOKEN_FILE',
      'AWS_CONTAINER_CREDENTIALS_FULL_URI',
      'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    ])
      delete env[key];
    const failure = await run(process.execPath, ['--import', 'tsx', 'bin/preflight.ts', '--region', REGION, '-c', 'stage=prod'], {
      env,
      timeout: 280_000,
    }).then(
      () => undefined,
      (e: { code?: number; stdout?: string }) => e,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toContain('FAIL  AWS credentials: no usable AWS credentials');
    expect(failure?.stdout).toContain('Not ready: 1 check failed.');
  });
});
