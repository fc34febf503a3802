/**
 * The dashboard (lib/constructs/dashboard.ts) on a bare stack: its name, every widget the runbook
 * names, and what the main widgets plot.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_NAMESPACE } from '../../../lambdas/contract/metrics';
import { DASHBOARD_WIDGETS, Dashboard, dashboardNameOf } from '../../../lib/constructs/dashboard';
import { Monitoring, RUNBOOK } from '../../../lib/constructs/monitoring';
import { PROJECT_ROOT } from '../../../lib/constructs/service-function';
import { buildTestStack, removeTestOutput, type TestStack } from '../synth';
import { logicalId, ofType } from '../template';
import { monitoredResources } from './monitored-resources';

interface Widget {
  type: string;
  properties: { title?: string; markdown?: string; metrics?: unknown[][]; alarms?: unknown[] };
}

let built: TestStack;
let dashboard: Dashboard;
let monitoring: Monitoring;
let widgets: Widget[];
let template: Template;

/** The body of the dashboard, with each CloudFormation token replaced by a readable placeholder. */
function bodyOf(t: Template): { widgets: Widget[] } {
  const [, resource] = ofType(t, 'AWS::CloudWatch::Dashboard')[0]!;
  const body = resource.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] } | string;
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : `<${JSON.stringify(part).replace(/"/g, "'")}>`)).join('');
  return JSON.parse(text) as { widgets: Widget[] };
}

beforeAll(() => {
  built = buildTestStack();
  const watched = monitoredResources(built.stack, 'qa');
  monitoring = new Monitoring(built.stack, 'Monitoring', watched);
  dashboard = new Dashboard(built.stack, 'Dashboard', { ...watched, monitoring });
  template = Template.fromStack(built.stack);
  widgets = bodyOf(template).widgets;
}, 120_000);

afterAll(() => removeTestOutput(built?.app));

const widget = (title: string) => {
  const found = widgets.find((w) => w.properties.title === title);
  expect(found, title).toBeDefined();
  return found!;
};

/** The metric lines of a graph, as JSON text (namespaces, names, dimensions, expressions). */
const plotted = (title: string) => JSON.stringify(widget(title).properties.metrics);

describe('the dashboard', () => {
  it('is one dashboard named webhooks-<stage>-<region> (dashboards are global to the account)', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', ['webhooks-qa-', { Ref: 'AWS::Region' }]] },
    });
    expect(dashboardNameOf('qa', 'eu-west-1')).toBe('webhooks-qa-eu-west-1');
    expect(logicalId(dashboard.dashboard)).toMatch(/^Dashboard/);
  });

  it('has every widget the runbook names, and the runbook names them', () => {
    const titles = widgets.map((w) => w.properties.title).filter(Boolean);
    const runbook = readFileSync(join(PROJECT_ROOT, RUNBOOK), 'utf8');
    for (const title of Object.values(DASHBOARD_WIDGETS)) {
      expect(titles).toContain(title);
      expect(runbook, `${RUNBOOK} never names the widget "${title}"`).toContain(title);
    }
  });

  it('shows the state of every alarm', () => {
    expect(widget(DASHBOARD_WIDGETS.alarms).properties.alarms).toHaveLength(monitoring.alarms.length);
  });

  it("plots deliveries published and attempts by every outcome, from the stage's own metrics", () => {
    const text = plotted(DASHBOARD_WIDGETS.throughput);
    expect(text).toContain('DeliveriesPublished');
    // Dimensions come sorted by name: outcome, then stage.
    for (const outcome of ['delivered', 'failed', 'failed_permanent', 'dead_lettered'])
      expect(text).toContain(`"${METRICS_NAMESPACE}","Attempts","outcome","${outcome}","stage","qa"`);
  });

  it('plots latency percentiles: attempt duration per lane, publish to first attempt', () => {
    const duration = plotted(DASHBOARD_WIDGETS.attemptDuration);
    for (const lane of ['fast', 'slow']) expect(duration).toContain(`"lane","${lane}"`);
    for (const stat of ['p50', 'p99']) {
      expect(duration).toContain(`"stat":"${stat}"`);
      expect(plotted(DASHBOARD_WIDGETS.publishToFirstAttempt)).toContain(`"stat":"${stat}"`);
    }
    expect(plotted(DASHBOARD_WIDGETS.publishToFirstAttempt)).toContain('PublishToFirstAttempt');
  });

  it("plots both delivery queues' depth and oldest age, and the dead-letter queues", () => {
    const depth = plotted(DASHBOARD_WIDGETS.queueDepth);
    const age = plotted(DASHBOARD_WIDGETS.queueAge);
    for (const queue of ['DeliveryQueue', 'SlowDeliveryQueue']) {
      expect(depth).toContain(queue);
      expect(age).toContain(queue);
    }
    expect(age).toContain('ApproximateAgeOfOldestMessage');
    for (const queue of ['DeadLetterQueue', 'PublishFailures', 'RecoveryDeadLetterQueue'])
      expect(plotted(DASHBOARD_WIDGETS.deadLetters)).toContain(queue);
  });

  it('plots lane moves and deferrals, and the rate-limit refusals of every bucket of the stage', () => {
    expect(plotted(DASHBOARD_WIDGETS.lanes)).toContain('LaneMoves');
    expect(plotted(DASHBOARD_WIDGETS.lanes)).toContain('LaneDeferrals');
    expect(plotted(DASHBOARD_WIDGETS.rateLimits)).toContain(
      `SEARCH('{${METRICS_NAMESPACE},stage,bucket} MetricName=\\"RateLimitRefusals\\" stage=\\"qa\\"', 'Sum', 300)`,
    );
  });

  it('plots errors, throttles and durations of the dispatchers, publisher, dead-letter consumer, authorizer, MCP and operations', () => {
    for (const title of [DASHBOARD_WIDGETS.functionErrors, DASHBOARD_WIDGETS.functionThrottles, DASHBOARD_WIDGETS.functionDurations]) {
      const text = plotted(title);
      for (const fn of [
        'Dispatcher',
        'SlowDispatcher',
        'Publisher',
        'DeadLetterConsumer',
        'Authorizer',
        'Mcp',
        'ListWebhooks',
        'CreateWebhook',
      ])
        expect(text, `${title}: ${fn}`).toContain(fn);
      expect(text).toContain('operations (2)');
    }
  });

  it("plots the API's requests, 4xx, 5xx and latency, the table's throttles and capacity", () => {
    const api = plotted(DASHBOARD_WIDGETS.apiRequests);
    for (const name of ['"Count"', '4XXError', '5XXError']) expect(api).toContain(name);
    expect(plotted(DASHBOARD_WIDGETS.apiLatency)).toContain('Latency');
    expect(plotted(DASHBOARD_WIDGETS.tableThrottles)).toContain('ThrottledRequests');
    expect(plotted(DASHBOARD_WIDGETS.tableCapacity)).toContain('ConsumedReadCapacityUnits');
    expect(plotted(DASHBOARD_WIDGETS.tableCapacity)).toContain('ConsumedWriteCapacityUnits');
    expect(plotted(DASHBOARD_WIDGETS.edgeFailures)).toContain(`${METRICS_NAMESPACE}/qa`);
  });
});
