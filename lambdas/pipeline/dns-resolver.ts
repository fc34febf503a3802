/**
 * Name resolution of the dispatcher (docs/behaviour.md#name-resolution): c-ares (`node:dns`
 * Resolver) rather than `dns.lookup`, so a slow name never waits in libuv's four-thread pool behind
 * other names, and never outlives its own short deadline, which is part of the attempt's 10 s.
 * A and AAAA are asked in parallel; every address either answers is returned, IPv4 first, for the
 * dispatcher to check and pin (docs/architecture.md#address-pinning).
 *
 * Whose fault a failure is decides whether it counts in the endpoint's streak: a name that does not
 * exist (NXDOMAIN) or has no address is the receiver's (`dns_failure`); our resolver failing or not
 * answering in time is the service's own (`service_error: dns_*`, retried, streak unchanged).
 */
import { Resolver as AresResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { serviceFaultReason } from '../domain/delivery-lifecycle';
import type { PinnedAddress } from './http-sender';

/** Deadline of one name's resolution (A and AAAA together), and c-ares' own per-query timeout and tries. */
export const DNS_LIMITS = { deadlineMs: 2_000, queryTimeoutMs: 700, tries: 2 } as const;

/** Failure reason of a name that does not exist or has no address: the receiver's fault. */
const DNS_FAILURE = 'dns_failure';

/** The c-ares codes that say the name itself has no address (the receiver's fault); any other is our resolver failing. */
const RECEIVER_CODES = new Set(['ENOTFOUND', 'ENODATA', 'EBADNAME', 'ENONAME']);

/** Codes that say our resolver did not answer in time (ECANCELLED: cancelled at our deadline). */
const TIMEOUT_CODES = new Set(['ETIMEOUT', 'ECANCELLED']);

/** A name that did not resolve, and whose fault that is. */
export class DnsLookupError extends Error {
  override readonly name = 'DnsLookupError';

  constructor(
    readonly hostname: string,
    /** The c-ares codes of the A and AAAA queries. */
    readonly codes: readonly string[],
    /** The failure reason to store: {@link DNS_FAILURE} or a service fault. */
    readonly reason: string,
  ) {
    super(`${hostname} did not resolve (${codes.join(', ')})`);
  }
}

/** Options of {@link createDnsResolver}; production uses the defaults. */
export interface DnsResolverOptions {
  /** @default DNS_LIMITS.deadlineMs */
  readonly deadlineMs?: number;
  /** @default DNS_LIMITS.queryTimeoutMs */
  readonly queryTimeoutMs?: number;
  /** @default DNS_LIMITS.tries */
  readonly tries?: number;
  /** Name servers (`ip` or `ip:port`). @default the system's (/etc/resolv.conf) */
  readonly servers?: readonly string[];
}

/** RFC 6761 §6.3: `localhost` is loopback, answered without DNS (the local stack's URLs use it). */
const LOCALHOST: readonly PinnedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** The c-ares code of a failed query. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'EUNKNOWN';
}

/** The failure reason of two failed queries (see the module comment). */
function reasonOf(codes: readonly string[]): string {
  if (codes.some((code) => code === 'ENOTFOUND')) return DNS_FAILURE; // NXDOMAIN: the name does not exist, whatever the type
  if (codes.every((code) => RECEIVER_CODES.has(code))) return DNS_FAILURE;
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return serviceFaultReason('dns_timeout');
  return serviceFaultReason('dns_unavailable');
}

/**
 * A resolver: every A and AAAA address of a name within the deadline, or a {@link DnsLookupError}.
 * Each call has its own c-ares channel, so the deadline cancels only that name's queries.
 */
export function createDnsResolver(options: DnsResolverOptions = {}): (hostname: string) => Promise<PinnedAddress[]> {
  const deadlineMs = options.deadlineMs ?? DNS_LIMITS.deadlineMs;
  return async (hostname) => {
    const name = hostname.replace(/\.$/, '').toLowerCase();
    const literal = isIP(name);
    if (literal) return [{ address: name, family: literal === 6 ? 6 : 4 }];
    if (name === 'localhost' || name.endsWith('.localhost')) return [...LOCALHOST];

    const resolver = new AresResolver({
      timeout: options.queryTimeoutMs ?? DNS_LIMITS.queryTimeoutMs,
      tries: options.tries ?? DNS_LIMITS.tries,
    });
    if (options.servers) resolver.setServers([...options.servers]);
    // At the deadline every query still open fails with ECANCELLED; an answer already in is kept.
    const timer = setTimeout(() => resolver.cancel(), deadlineMs);
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
      const addresses: PinnedAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (addresses.length > 0) return addresses;
      const codes = [v4, v6].map((r) => (r.status === 'rejected' ? codeOf(r.reason) : 'ENODATA'));
      throw new DnsLookupError(name, codes, reasonOf(codes));
    } finally {
      clearTimeout(timer);
    }
  };
}
