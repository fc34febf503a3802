import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_CONFIG,
  DEFAULT_TABLE_CAPACITY,
  loadConfig,
  parseConfig,
  minimumConcurrencyQuotaOf,
  quotasOf,
  reservedConcurrencyOf,
  tableBillingOf,
  workspaceLimitsOf,
} from '../../lib/config';
import { DEFAULT_WORKSPACE_LIMITS } from '../../lambdas/contract/limits';
import { DEFAULT_QUOTAS } from '../../lambdas/contract/rate-limits';
import { cdkJsonContext } from './synth';

describe('parseConfig', () => {
  it('gives the documented defaults for an empty context', () => {
    expect(parseConfig({})).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG).toEqual({
      stage: 'dev',
      rateLimits: {},
      logRetentionDays: 30,
      authorizerCacheTtlSeconds: 60,
      throttlingRateLimit: 100,
      throttlingBurstLimit: 200,
      removalPolicy: 'retain',
      alarmEmail: null,
      mcpAllowedOrigins: [],
      consoleFrameAncestors: [],
      consoleOidc: null,
      mcpReservedConcurrency: 10,
      publisherReservedConcurrency: 50,
      deadLetterMaxConcurrency: 2,
      apiGatewayAccountRole: false,
      recoveryRatePerSecond: 20,
      recoveryJobsPerWorkspace: 3,
      workspaceLimits: {},
      deliverySuccessRateAlarmPercent: 90,
      dispatcherBatchSize: 25,
      dispatcherMaxConcurrency: 4,
      tableBillingMode: 'on-demand',
      tableCapacity: {},
      platformPrincipals: [],
    });
    expect(workspaceLimitsOf(DEFAULT_CONFIG)).toEqual({ testSendsPerMinute: 60, replaysPerMinute: 600, endpoints: 1000, apiTokens: 100 });
  });

  it('matches the defaults written in cdk.json', () => {
    const context = cdkJsonContext();
    expect(parseConfig(context)).toEqual(DEFAULT_CONFIG);
    for (const [key, value] of Object.entries(DEFAULT_CONFIG)) expect(context[key], key).toEqual(value);
  });

  it('parses command-line strings (-c key=value)', () => {
    const config = parseConfig({
      stage: 'prod-eu',
      logRetentionDays: '90',
      authorizerCacheTtlSeconds: '0',
      throttlingRateLimit: '12.5',
      throttlingBurstLimit: '25',
      removalPolicy: 'destroy',
      rateLimits: '{"rest_write":{"limit":10},"mcp":{"windowSeconds":30}}',
      alarmEmail: 'ops@example.com',
      mcpAllowedOrigins: 'https://app.example.com, http://localhost:6274',
      consoleFrameAncestors: 'https://app.example.com,http://localhost:5173',
      consoleOidc: '{"issuer":"https://idp.example.com","clientId":"console","roles":{"read":["support"]}}',
      mcpReservedConcurrency: '25',
      publisherReservedConcurrency: '100',
      deadLetterMaxConcurrency: '5',
      apiGatewayAccountRole: 'true',
      recoveryRatePerSecond: '50',
      recoveryJobsPerWorkspace: '5',
      workspaceLimits: '{"testSendsPerMinute":10,"endpoints":50}',
      deliverySuccessRateAlarmPercent: '95',
      dispatcherBatchSize: '10',
      dispatcherMaxConcurrency: '8',
      tableBillingMode: 'provisioned',
      tableCapacity: '{"writeMax":20000}',
      platformPrincipals: 'arn:aws:iam::123456789012:role/platform-backend, arn:aws:iam::123456789012:user/ops',
    });
    expect(config).toEqual({
      platformPrincipals: ['arn:aws:iam::123456789012:role/platform-backend', 'arn:aws:iam::123456789012:user/ops'],
      alarmEmail: 'ops@example.com',
      mcpAllowedOrigins: ['https://app.example.com', 'http://localhost:6274'],
      consoleFrameAncestors: ['https://app.example.com', 'http://localhost:5173'],
      consoleOidc: {
        issuer: 'https://idp.example.com',
        clientId: 'console',
        groupsClaim: 'groups',
        roles: { read: ['support'], write: [], admin: [] },
        trustEmailFromIssuer: false,
        scopes: ['openid', 'email', 'profile'],
        name: 'idp.example.com',
      },
      mcpReservedConcurrency: 25,
      publisherReservedConcurrency: 100,
      deadLetterMaxConcurrency: 5,
      apiGatewayAccountRole: true,
      stage: 'prod-eu',
      logRetentionDays: 90,
      authorizerCacheTtlSeconds: 0,
      throttlingRateLimit: 12.5,
      throttlingBurstLimit: 25,
      removalPolicy: 'destroy',
      rateLimits: { rest_write: { limit: 10 }, mcp: { windowSeconds: 30 } },
      recoveryRatePerSecond: 50,
      recoveryJobsPerWorkspace: 5,
      workspaceLimits: { testSendsPerMinute: 10, endpoints: 50 },
      deliverySuccessRateAlarmPercent: 95,
      dispatcherBatchSize: 10,
      dispatcherMaxConcurrency: 8,
      tableBillingMode: 'provisioned',
      tableCapacity: { writeMax: 20000 },
    });
    expect(tableBillingOf(config)).toEqual({ mode: 'provisioned', ...DEFAULT_TABLE_CAPACITY, writeMax: 20000 });
    expect(workspaceLimitsOf(config)).toEqual({ ...DEFAULT_WORKSPACE_LIMITS, testSendsPerMinute: 10, endpoints: 50 });
    expect(quotasOf(config)).toEqual({
      ...DEFAULT_QUOTAS,
      rest_write: { limit: 10, windowSeconds: 60 },
      mcp: { limit: 300, windowSeconds: 30 },
    });
  });

  it('reports every invalid value at once', () => {
    let error: unknown;
    try {
      parseConfig({
        stage: 'Prod_1',
        logRetentionDays: 31,
        authorizerCacheTtlSeconds: 3601,
        throttlingRateLimit: 0,
        throttlingBurstLimit: 'many',
        removalPolicy: 'snapshot',
        rateLimits: { rest_reed: { limit: 1 }, rest_write: { limit: -1, burst: 3 } },
        alarmEmail: 'ops at example',
        mcpAllowedOrigins: ['https://app.example.com/'],
        consoleFrameAncestors: ['http://app.example.com'],
        consoleOidc: { issuer: 'http://idp.example.com', clientId: 'console', roles: { read: ['support'] } },
        mcpReservedConcurrency: 0,
        publisherReservedConcurrency: 1001,
        deadLetterMaxConcurrency: 1,
        apiGatewayAccountRole: 'yes',
        recoveryRatePerSecond: 0,
        workspaceLimits: { endpoint: 10, apiTokens: 0, replaysPerMinute: 2.5 },
        deliverySuccessRateAlarmPercent: 0,
        dispatcherBatchSize: 101,
        dispatcherMaxConcurrency: 1,
        tableBillingMode: 'PAY_PER_REQUEST',
        tableCapacity: { readMax: 0 },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const key of [
      'stage',
      'logRetentionDays',
      'authorizerCacheTtlSeconds',
      'throttlingRateLimit',
      'throttlingBurstLimit',
      'removalPolicy',
      'alarmEmail',
      'mcpAllowedOrigins',
      'consoleFrameAncestors',
      'consoleOidc.issuer',
      'mcpReservedConcurrency',
      'publisherReservedConcurrency',
      'deadLetterMaxConcurrency',
      'apiGatewayAccountRole',
      'recoveryRatePerSecond',
      'deliverySuccessRateAlarmPercent',
      'dispatcherBatchSize',
      'dispatcherMaxConcurrency',
      'tableBillingMode',
      'tableCapacity',
    ]) {
      expect(problems).toContain(key);
    }
    expect(problems).toContain('rateLimits.rest_reed: unknown bucket');
    expect(problems).toContain('rateLimits.rest_write.limit must be a positive integer');
    expect(problems).toContain('rateLimits.rest_write.burst: unknown field');
    expect(problems).toContain(
      'workspaceLimits.endpoint: unknown limit (known: testSendsPerMinute, replaysPerMinute, endpoints, apiTokens)',
    );
    expect(problems).toContain('workspaceLimits.apiTokens must be an integer from 1 to 100000 (got 0)');
    expect(problems).toContain('workspaceLimits.replaysPerMinute must be an integer from 1 to 100000 (got 2.5)');
  });

  it('takes workspaceLimits as an object or a JSON string of integers from 1 to 100000, and refuses anything else', () => {
    expect(parseConfig({ workspaceLimits: { apiTokens: 1, replaysPerMinute: 100000 } }).workspaceLimits).toEqual({
      apiTokens: 1,
      replaysPerMinute: 100000,
    });
    expect(parseConfig({ workspaceLimits: '{}' }).workspaceLimits).toEqual({});
    for (const bad of ['not json', '[]', [], 42])
      expect(() => parseConfig({ workspaceLimits: bad }), String(bad)).toThrow(/workspaceLimits must be an object/);
    for (const bad of [100001, -1, '60', null]) {
      expect(() => parseConfig({ workspaceLimits: { testSendsPerMinute: bad } }), String(bad)).toThrow(
        /workspaceLimits.testSendsPerMinute must be an integer from 1 to 100000/,
      );
    }
  });

  it('takes recoveryRatePerSecond as an integer from 1 to 200', () => {
    expect(parseConfig({ recoveryRatePerSecond: 1 }).recoveryRatePerSecond).toBe(1);
    expect(parseConfig({ recoveryRatePerSecond: '200' }).recoveryRatePerSecond).toBe(200);
    for (const bad of [0, 201, 2.5, 'fast'])
      expect(() => parseConfig({ recoveryRatePerSecond: bad }), String(bad)).toThrow(
        /recoveryRatePerSecond must be an integer from 1 to 200/,
      );
  });

  it('takes deliverySuccessRateAlarmPercent as an integer from 1 to 100', () => {
    expect(parseConfig({ deliverySuccessRateAlarmPercent: 1 }).deliverySuccessRateAlarmPercent).toBe(1);
    expect(parseConfig({ deliverySuccessRateAlarmPercent: '100' }).deliverySuccessRateAlarmPercent).toBe(100);
    for (const bad of [0, 101, 99.5, 'high', -5]) {
      expect(() => parseConfig({ deliverySuccessRateAlarmPercent: bad }), String(bad)).toThrow(
        /deliverySuccessRateAlarmPercent must be an integer from 1 to 100/,
      );
    }
  });

  it('takes no alarm e-mail from null or an empty string (-c alarmEmail=), and refuses a non-string', () => {
    expect(parseConfig({ alarmEmail: null }).alarmEmail).toBeNull();
    expect(parseConfig({ alarmEmail: '' }).alarmEmail).toBeNull();
    expect(() => parseConfig({ alarmEmail: 42 })).toThrow(/alarmEmail must be an e-mail address/);
  });

  it('takes mcpReservedConcurrency as an integer from 1 to 1000, or null / an empty value / "null" for an unreserved function', () => {
    expect(parseConfig({}).mcpReservedConcurrency).toBe(10);
    expect(parseConfig({ mcpReservedConcurrency: 1 }).mcpReservedConcurrency).toBe(1);
    expect(parseConfig({ mcpReservedConcurrency: '1000' }).mcpReservedConcurrency).toBe(1000);
    // null is a value here (cdk.json "mcpReservedConcurrency": null), not "use the default".
    for (const none of [null, '', 'null'])
      expect(parseConfig({ mcpReservedConcurrency: none }).mcpReservedConcurrency, String(none)).toBeNull();
    for (const bad of [0, 1001, 2.5, 'many', -1]) {
      expect(() => parseConfig({ mcpReservedConcurrency: bad }), String(bad)).toThrow(
        /mcpReservedConcurrency must be an integer from 1 to 1000, or null/,
      );
    }
  });

  it('takes publisherReservedConcurrency like mcpReservedConcurrency: 1 to 1000, or null for none', () => {
    expect(parseConfig({}).publisherReservedConcurrency).toBe(50);
    expect(parseConfig({ publisherReservedConcurrency: '1000' }).publisherReservedConcurrency).toBe(1000);
    for (const none of [null, '', 'null'])
      expect(parseConfig({ publisherReservedConcurrency: none }).publisherReservedConcurrency, String(none)).toBeNull();
    for (const bad of [0, 1001, 2.5, 'many'])
      expect(() => parseConfig({ publisherReservedConcurrency: bad }), String(bad)).toThrow(
        /publisherReservedConcurrency must be an integer from 1 to 1000, or null for an unreserved function \(needed where the account's Lambda concurrency quota leaves nothing to reserve\)/,
      );
  });

  it('takes deadLetterMaxConcurrency from 2 (the least an SQS event source takes) to 100', () => {
    expect(parseConfig({}).deadLetterMaxConcurrency).toBe(2);
    expect(parseConfig({ deadLetterMaxConcurrency: '100' }).deadLetterMaxConcurrency).toBe(100);
    for (const bad of [1, 101, 'x'])
      expect(() => parseConfig({ deadLetterMaxConcurrency: bad }), String(bad)).toThrow(
        /deadLetterMaxConcurrency must be an integer from 2 to 100/,
      );
  });

  it('takes apiGatewayAccountRole as true or false, from JSON or the command line', () => {
    expect(parseConfig({}).apiGatewayAccountRole).toBe(false);
    expect(parseConfig({ apiGatewayAccountRole: true }).apiGatewayAccountRole).toBe(true);
    expect(parseConfig({ apiGatewayAccountRole: 'true' }).apiGatewayAccountRole).toBe(true);
    expect(parseConfig({ apiGatewayAccountRole: 'false' }).apiGatewayAccountRole).toBe(false);
    for (const bad of ['yes', 1, 'TRUE'])
      expect(() => parseConfig({ apiGatewayAccountRole: bad }), String(bad)).toThrow(/apiGatewayAccountRole must be true or false/);
  });

  it('counts the concurrency a stage reserves, and the account quota that leaves Lambda its 100 unreserved', () => {
    expect(reservedConcurrencyOf(DEFAULT_CONFIG)).toBe(60);
    expect(minimumConcurrencyQuotaOf(DEFAULT_CONFIG)).toBe(160);
    const lowQuota = parseConfig({ mcpReservedConcurrency: null, publisherReservedConcurrency: null });
    expect(reservedConcurrencyOf(lowQuota)).toBe(0);
    // Nothing reserved: any quota will do (a new account's 10 included).
    expect(minimumConcurrencyQuotaOf(lowQuota)).toBe(0);
    expect(minimumConcurrencyQuotaOf(parseConfig({ publisherReservedConcurrency: 'null' }))).toBe(110);
  });

  it('takes no MCP origin by default and from an empty list (-c mcpAllowedOrigins=), any from "*"', () => {
    expect(parseConfig({}).mcpAllowedOrigins).toEqual([]);
    expect(parseConfig({ mcpAllowedOrigins: [] }).mcpAllowedOrigins).toEqual([]);
    expect(parseConfig({ mcpAllowedOrigins: '' }).mcpAllowedOrigins).toEqual([]);
    expect(parseConfig({ mcpAllowedOrigins: '[]' }).mcpAllowedOrigins).toEqual([]);
    expect(parseConfig({ mcpAllowedOrigins: ['*'] }).mcpAllowedOrigins).toEqual(['*']);
  });

  it('takes mcpAllowedOrigins as a list, a JSON array or a comma-separated string, and refuses what is not an origin', () => {
    expect(parseConfig({ mcpAllowedOrigins: ['https://a.example'] }).mcpAllowedOrigins).toEqual(['https://a.example']);
    expect(parseConfig({ mcpAllowedOrigins: '["https://a.example","http://localhost:3000"]' }).mcpAllowedOrigins).toEqual([
      'https://a.example',
      'http://localhost:3000',
    ]);
    expect(parseConfig({ mcpAllowedOrigins: '*' }).mcpAllowedOrigins).toEqual(['*']);
    expect(parseConfig({ mcpAllowedOrigins: 'https://a.example,https://a.example' }).mcpAllowedOrigins).toEqual(['https://a.example']);
    expect(() => parseConfig({ mcpAllowedOrigins: '[not json' })).toThrow(/mcpAllowedOrigins must be/);
    expect(() => parseConfig({ mcpAllowedOrigins: [42] })).toThrow(/mcpAllowedOrigins must be/);
    expect(() => parseConfig({ mcpAllowedOrigins: ['*', 'https://a.example'] })).toThrow(/"\*" already allows every origin/);
    for (const bad of ['a.example', 'https://a.example/path', 'ftp://a.example', 'https://a.example:3000/']) {
      expect(() => parseConfig({ mcpAllowedOrigins: [bad] }), bad).toThrow(/is not an origin/);
    }
    expect(() => parseConfig({ mcpAllowedOrigins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example`) })).toThrow(
      /at most 100 origins/,
    );
  });

  it('lets no origin frame the console by default or from an empty list (-c consoleFrameAncestors=)', () => {
    expect(parseConfig({}).consoleFrameAncestors).toEqual([]);
    expect(parseConfig({ consoleFrameAncestors: [] }).consoleFrameAncestors).toEqual([]);
    expect(parseConfig({ consoleFrameAncestors: '' }).consoleFrameAncestors).toEqual([]);
    expect(parseConfig({ consoleFrameAncestors: '[]' }).consoleFrameAncestors).toEqual([]);
  });

  it('takes consoleFrameAncestors as a list, a JSON array or a comma-separated string of https origins (http for loopback only)', () => {
    expect(parseConfig({ consoleFrameAncestors: ['https://app.example.com'] }).consoleFrameAncestors).toEqual(['https://app.example.com']);
    expect(
      parseConfig({ consoleFrameAncestors: '["https://app.example.com:8443","http://127.0.0.1:4000"]' }).consoleFrameAncestors,
    ).toEqual(['https://app.example.com:8443', 'http://127.0.0.1:4000']);
    expect(parseConfig({ consoleFrameAncestors: 'https://a.example,https://a.example' }).consoleFrameAncestors).toEqual([
      'https://a.example',
    ]);
    expect(() => parseConfig({ consoleFrameAncestors: [42] })).toThrow(/consoleFrameAncestors must be a list of origins/);
    expect(() => parseConfig({ consoleFrameAncestors: '[not json' })).toThrow(/consoleFrameAncestors must be a list of origins/);
    for (const bad of [
      '*',
      'https://*.example.com',
      'http://app.example.com',
      'https://app.example.com/',
      "'self'",
      'https://A.example.com',
    ]) {
      expect(() => parseConfig({ consoleFrameAncestors: [bad] }), bad).toThrow(/is not an origin that may frame the console/);
    }
    expect(() => parseConfig({ consoleFrameAncestors: Array.from({ length: 51 }, (_, i) => `https://a${i}.example`) })).toThrow(
      /at most 50 origins/,
    );
  });

  it('turns staff sign-in off without consoleOidc, or with null or an empty value (-c consoleOidc=)', () => {
    expect(parseConfig({}).consoleOidc).toBeNull();
    expect(parseConfig({ consoleOidc: null }).consoleOidc).toBeNull();
    expect(parseConfig({ consoleOidc: '' }).consoleOidc).toBeNull();
  });

  it('takes consoleOidc as an object or a JSON string, with the defaults of the ones left out', () => {
    const given = {
      issuer: 'https://login.example.com/oauth2/default',
      clientId: '0oa1console',
      groupsClaim: 'roles',
      roles: { read: ['webhooks-support'], write: ['webhooks-oncall'], admin: ['webhooks-admins'] },
      trustEmailFromIssuer: true,
      scopes: ['openid', 'email', 'groups'],
      name: 'Okta',
    };
    expect(parseConfig({ consoleOidc: given }).consoleOidc).toEqual(given);
    expect(parseConfig({ consoleOidc: JSON.stringify(given) }).consoleOidc).toEqual(given);
    expect(
      parseConfig({ consoleOidc: { issuer: 'https://idp.example.com', clientId: 'c', roles: { admin: ['ops'] } } }).consoleOidc,
    ).toEqual({
      issuer: 'https://idp.example.com',
      clientId: 'c',
      groupsClaim: 'groups',
      roles: { read: [], write: [], admin: ['ops'] },
      trustEmailFromIssuer: false,
      scopes: ['openid', 'email', 'profile'],
      name: 'idp.example.com',
    });
  });

  it("refuses a consoleOidc its parser refuses, naming each fault (a deployed stack's issuer is https, never loopback)", () => {
    const base = { issuer: 'https://idp.example.com', clientId: 'console', roles: { read: ['support'] } };
    const problemsOf = (value: unknown): string => {
      try {
        parseConfig({ consoleOidc: value });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems.join('\n');
      }
      throw new Error(`consoleOidc ${JSON.stringify(value)} was accepted`);
    };
    expect(problemsOf('{not json')).toMatch(/consoleOidc must be an object/);
    expect(problemsOf(['https://idp.example.com'])).toMatch(/consoleOidc must be an object/);
    expect(problemsOf({ ...base, issuer: 'http://localhost:8080' })).toMatch(/consoleOidc.issuer must be the provider's https issuer URL/);
    expect(problemsOf({ ...base, issuer: 'https://idp.example.com/?tenant=1' })).toMatch(/consoleOidc.issuer/);
    expect(problemsOf({ ...base, clientId: '' })).toMatch(/consoleOidc.clientId/);
    expect(problemsOf({ ...base, roles: {} })).toMatch(/consoleOidc.roles must list at least one group/);
    expect(problemsOf({ ...base, roles: { owner: ['x'] } })).toMatch(/unknown role "owner"/);
    expect(problemsOf({ ...base, scopes: ['email'] })).toMatch(/"openid" among them/);
    expect(problemsOf({ ...base, clientSecret: 's3cret' })).toMatch(/consoleOidc has an unknown key "clientSecret"/);
    // Lambda allows 4 KB of environment per function, and the setting is one variable: 50 groups of
    // 100 characters are each allowed, but not all of them together.
    const manyGroups = Array.from({ length: 50 }, (_, i) => `${'g'.repeat(96)}-${String(i).padStart(3, '0')}`);
    expect(problemsOf({ ...base, roles: { read: manyGroups } })).toMatch(/consoleOidc takes \d+ bytes as JSON, over the 2048 it may/);
    expect(() => parseConfig({ consoleOidc: { ...base, roles: { read: manyGroups.slice(0, 10) } } })).not.toThrow();
    // Every fault at once, beside the other settings' faults.
    const all = problemsOf({ issuer: 'ftp://idp', clientId: 7, roles: { read: 'support' } });
    for (const fault of ['consoleOidc.issuer', 'consoleOidc.clientId', 'consoleOidc.roles.read']) expect(all).toContain(fault);
  });

  it('takes tableBillingMode on-demand (the default) or provisioned, with tableCapacity bounds merged over the defaults', () => {
    expect(tableBillingOf(parseConfig({}))).toEqual({ mode: 'on-demand' });
    // The bounds matter only when provisioned.
    expect(tableBillingOf(parseConfig({ tableCapacity: { readMin: 50 } }))).toEqual({ mode: 'on-demand' });
    expect(tableBillingOf(parseConfig({ tableBillingMode: 'provisioned' }))).toEqual({
      mode: 'provisioned',
      readMin: 5,
      readMax: 2000,
      writeMin: 5,
      writeMax: 10000,
    });
    expect(
      tableBillingOf(
        parseConfig({ tableBillingMode: 'provisioned', tableCapacity: '{"readMin":1,"readMax":1,"writeMin":100,"writeMax":1000000}' }),
      ),
    ).toEqual({
      mode: 'provisioned',
      readMin: 1,
      readMax: 1,
      writeMin: 100,
      writeMax: 1000000,
    });
    for (const bad of ['provisioned ', 'PROVISIONED', 'ondemand', 42])
      expect(() => parseConfig({ tableBillingMode: bad }), String(bad)).toThrow(/tableBillingMode must be "on-demand" or "provisioned"/);
    for (const bad of ['not json', '[]', 7])
      expect(() => parseConfig({ tableCapacity: bad }), String(bad)).toThrow(/tableCapacity must be an object/);
    expect(() => parseConfig({ tableCapacity: { writeMaximum: 5 } })).toThrow(
      /tableCapacity.writeMaximum: unknown bound \(known: readMin, readMax, writeMin, writeMax\)/,
    );
    for (const bad of [0, 1000001, 2.5, '5'])
      expect(() => parseConfig({ tableCapacity: { readMin: bad } }), String(bad)).toThrow(
        /tableCapacity.readMin must be an integer from 1 to 1000000/,
      );
    expect(() => parseConfig({ tableCapacity: { writeMin: 20000 } })).toThrow(
      /tableCapacity: writeMin \(20000\) must be at most writeMax \(10000\)/,
    );
  });

  it('refuses rateLimits that are not an object', () => {
    expect(() => parseConfig({ rateLimits: 'not json' })).toThrow(/rateLimits must be an object/);
    expect(() => parseConfig({ rateLimits: [] })).toThrow(/rateLimits must be an object/);
  });
});

describe('loadConfig', () => {
  it('reads the keys from CDK context', () => {
    const app = new App({ context: { stage: 'qa', logRetentionDays: 7 } });
    expect(loadConfig(app)).toEqual({ ...DEFAULT_CONFIG, stage: 'qa', logRetentionDays: 7 });
  });
});
