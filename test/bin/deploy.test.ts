/**
 * `npm run deploy`: the pre-flight first, then `cdk deploy` with the same settings, profile and
 * region and cdk's own flags passed on; nothing deployed when the pre-flight fails. The cdk
 * invocation is stubbed (the spawner), the pre-flight is the real one or a stub.
 */
import { describe, expect, it } from 'vitest';
import { main, type Spawner } from '../../bin/deploy';
import type { CommandLine } from '../../bin/preflight/args';
import type { SynthesizedStage } from '../../lib/synth-template';
import { REGION, setAccount } from './preflight-account';

/** A spawner that records its calls and exits with `code`. */
function recordingSpawner(code = 0) {
  const calls: { command: string; args: readonly string[]; env: NodeJS.ProcessEnv }[] = [];
  const spawn: Spawner = async (command, args, env) => {
    calls.push({ command, args, env });
    return code;
  };
  return { calls, spawn };
}

const ready = async (command: CommandLine) => ({ ready: true, stackName: `Webhooks-${command.context.stage ?? 'dev'}`, results: [] });
const notReady = async () => ({ ready: false, stackName: 'Webhooks-prod', results: [] });

describe('npm run deploy', () => {
  it("runs cdk deploy of the stage with the settings, the profile, the region and cdk's own flags", async () => {
    const { calls, spawn } = recordingSpawner();
    const seen: CommandLine[] = [];
    const code = await main(
      [
        '--region',
        'eu-central-1',
        '--profile',
        'ops',
        '-c',
        'stage=prod',
        '--context',
        'mcpReservedConcurrency=null',
        '--require-approval',
        'never',
        '--outputs-file',
        'outputs-prod.json',
      ],
      { preflight: async (c) => (seen.push(c), ready(c)), spawn, env: { PATH: '/usr/bin', AWS_REGION: 'us-east-1' }, print: () => {} },
    );
    expect(code).toBe(0);
    expect(seen).toEqual([
      {
        region: 'eu-central-1',
        profile: 'ops',
        context: { stage: 'prod', mcpReservedConcurrency: 'null' },
        rest: ['--require-approval', 'never', '--outputs-file', 'outputs-prod.json'],
        help: false,
      },
    ]);
    expect(calls).toEqual([
      {
        command: 'npx',
        args: [
          'cdk',
          'deploy',
          'Webhooks-prod',
          '-c',
          'stage=prod',
          '-c',
          'mcpReservedConcurrency=null',
          '--profile',
          'ops',
          '--require-approval',
          'never',
          '--outputs-file',
          'outputs-prod.json',
        ],
        env: { PATH: '/usr/bin', AWS_REGION: 'eu-central-1', AWS_DEFAULT_REGION: 'eu-central-1' },
      },
    ]);
  });

  it("leaves the region to the environment when none is given, and returns cdk's exit code", async () => {
    const { calls, spawn } = recordingSpawner(3);
    expect(await main(['-c', 'stage=dev'], { preflight: ready, spawn, env: { AWS_REGION: 'us-east-1' }, print: () => {} })).toBe(3);
    expect(calls[0]).toMatchObject({ args: ['cdk', 'deploy', 'Webhooks-dev', '-c', 'stage=dev'], env: { AWS_REGION: 'us-east-1' } });
  });

  it('deploys nothing when the pre-flight fails', async () => {
    const { calls, spawn } = recordingSpawner();
    const lines: string[] = [];
    expect(await main(['-c', 'stage=prod'], { preflight: notReady, spawn, print: (l) => lines.push(l) })).toBe(1);
    expect(calls).toEqual([]);
    expect(lines).toEqual(['The pre-flight failed: nothing was deployed.']);
  });

  it('runs the real pre-flight first: in an account that is not bootstrapped it prints the fix and stops', async () => {
    setAccount({ bootstrapVersion: null });
    const stage: SynthesizedStage = {
      stage: 'prod',
      stackName: 'Webhooks-prod',
      template: { Resources: {} },
      requiredBootstrapVersion: 6,
      bootstrapVersionParameter: '/cdk-bootstrap/hnb659fds/version',
    };
    const { calls, spawn } = recordingSpawner();
    const lines: string[] = [];
    const code = await main(['--region', REGION, '-c', 'stage=prod'], { synthesize: () => stage, spawn, print: (l) => lines.push(l) });
    expect(code).toBe(1);
    expect(calls).toEqual([]);
    expect(lines).toContain(
      'FAIL  CDK bootstrap: 123456789012/eu-west-1 is not bootstrapped (no /cdk-bootstrap/hnb659fds/version parameter, no CDKToolkit stack)',
    );
    expect(lines).toContain('        npx cdk bootstrap aws://123456789012/eu-west-1');
    expect(lines.at(-1)).toBe('The pre-flight failed: nothing was deployed.');
  });

  it('refuses a flag without its value', async () => {
    const { calls, spawn } = recordingSpawner();
    const lines: string[] = [];
    expect(await main(['--profile'], { preflight: ready, spawn, print: (l) => lines.push(l) })).toBe(1);
    expect(calls).toEqual([]);
    expect(lines[0]).toMatch(/^--profile needs a value/);
  });
});
