/**
 * A loopback UDP DNS server whose answers are scripted by the test: addresses, an error code
 * (NXDOMAIN, SERVFAIL, …) or silence. Just enough of RFC 1035 for c-ares' A and AAAA queries.
 */
import { createSocket } from 'node:dgram';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** DNS response codes the tests use. */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** One question as the server saw it. */
export interface DnsQuestion {
  readonly name: string;
  /** 1 = A, 28 = AAAA. */
  readonly type: number;
}

/** What to answer: addresses (of the asked type; others are left out), an error code, or nothing at all. */
export type DnsAnswer = { addresses: string[] } | { rcode: number } | 'silent';

/** Starts a server on 127.0.0.1; `answer` decides each reply. */
export async function scriptedDnsServer(answer: (q: DnsQuestion) => DnsAnswer) {
  const seen: DnsQuestion[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    // Header (12 bytes), then the question: labels up to a zero byte, type, class.
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const question = { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(offset + 1) };
    seen.push(question);
    const reply = answer(question);
    if (reply === 'silent') return;
    const records = 'addresses' in reply ? reply.addresses.filter((a) => (question.type === 1 ? isIPv4(a) : !isIPv4(a))) : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8180 | ('rcode' in reply ? reply.rcode : 0), 2); // QR, RD, RA, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((address) => {
      const rdata = Buffer.from(ipaddr.parse(address).toByteArray());
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(question.type, 2);
      rr.writeUInt16BE(1, 4); // class IN
      rr.writeUInt32BE(60, 6); // ttl
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((ok) => socket.bind(0, '127.0.0.1', () => ok()));
  const { port } = socket.address();
  return {
    server: `127.0.0.1:${port}`,
    seen,
    async stop() {
      await new Promise<void>((ok) => socket.close(() => ok()));
    },
  };
}
