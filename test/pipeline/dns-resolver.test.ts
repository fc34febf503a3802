/**
 * The dispatcher's resolver (docs/behaviour.md#name-resolution) against a real loopback DNS
 * server: A and AAAA, its own deadline, and whose fault a failure is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDnsResolver, DnsLookupError, DNS_LIMITS } from '../../lambdas/pipeline/dns-resolver';
import { RCODE, scriptedDnsServer, type DnsAnswer, type DnsQuestion } from '../helpers/dns-server';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

async function dns(answer: (q: DnsQuestion) => DnsAnswer) {
  const server = await scriptedDnsServer(answer);
  stops.push(() => server.stop());
  return { ...server, resolve: createDnsResolver({ servers: [server.server], deadlineMs: 400, queryTimeoutMs: 100, tries: 2 }) };
}

/** The error a resolution fails with. */
async function failure(promise: Promise<unknown>): Promise<DnsLookupError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DnsLookupError);
  return error as DnsLookupError;
}

describe('createDnsResolver', () => {
  it('asks A and AAAA and returns every address, IPv4 first', async () => {
    const server = await dns(() => ({ addresses: ['93.184.216.34', '2606:2800:220:1::1', '93.184.216.35'] }));
    expect(await server.resolve('Hooks.Example.COM.')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '93.184.216.35', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    expect(server.seen.map((q) => [q.name, q.type]).sort()).toEqual([
      ['hooks.example.com', 1],
      ['hooks.example.com', 28],
    ]);
  });

  it('a name with only IPv6 (or only IPv4) resolves to what it has', async () => {
    const server = await dns(() => ({ addresses: ['2606:2800:220:1::1'] }));
    expect(await server.resolve('v6.example.com')).toEqual([{ address: '2606:2800:220:1::1', family: 6 }]);
  });

  it('NXDOMAIN and no address at all are the receiver’s fault: dns_failure', async () => {
    const nx = await dns(() => ({ rcode: RCODE.NXDOMAIN }));
    expect(await failure(nx.resolve('gone.example.com'))).toMatchObject({ reason: 'dns_failure', codes: ['ENOTFOUND', 'ENOTFOUND'] });
    const empty = await dns(() => ({ addresses: [] }));
    expect((await failure(empty.resolve('empty.example.com'))).reason).toBe('dns_failure');
  });

  it('a resolver that fails (SERVFAIL, REFUSED) is the service’s fault', async () => {
    const servfail = await dns(() => ({ rcode: RCODE.SERVFAIL }));
    expect((await failure(servfail.resolve('a.example.com'))).reason).toBe('service_error: dns_unavailable');
    const refused = await dns(() => ({ rcode: RCODE.REFUSED }));
    expect((await failure(refused.resolve('a.example.com'))).reason).toBe('service_error: dns_unavailable');
  });

  it('a resolver that never answers fails as the service’s dns_timeout at its own deadline', async () => {
    const silent = await dns(() => 'silent');
    const resolve = createDnsResolver({ servers: [silent.server], deadlineMs: 300, queryTimeoutMs: 1_000, tries: 3 });
    const started = performance.now();
    const error = await failure(resolve('slow.example.com'));
    const took = performance.now() - started;
    expect(error.reason).toBe('service_error: dns_timeout');
    // The deadline ends it, not c-ares' own retries (3 tries of 1 s and more: several seconds).
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(2_000);
  });

  it('an answer in before the deadline is kept when the other query never comes back', async () => {
    const half = await dns((q) => (q.type === 1 ? { addresses: ['93.184.216.34'] } : 'silent'));
    expect(await half.resolve('half.example.com')).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('no server at all (connection refused) is the service’s fault, never the receiver’s', async () => {
    const resolve = createDnsResolver({ servers: ['127.0.0.1:9'], deadlineMs: 400, queryTimeoutMs: 100, tries: 1 });
    expect((await failure(resolve('a.example.com'))).reason).toMatch(/^service_error: dns_/);
  });

  it('IP literals and localhost need no DNS', async () => {
    const server = await dns(() => 'silent');
    expect(await server.resolve('127.0.0.1')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await server.resolve('::1')).toEqual([{ address: '::1', family: 6 }]);
    expect(await server.resolve('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(server.seen).toEqual([]);
  });

  it('keeps its deadline well inside the 10 s request deadline', () => {
    expect(DNS_LIMITS.deadlineMs).toBeLessThanOrEqual(2_000);
  });
});
