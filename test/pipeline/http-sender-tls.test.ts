/**
 * The sender over TLS against a real loopback https receiver (docs/architecture.md#address-pinning):
 * the connection goes to the pinned address while TLS names and verifies the host name (SNI and
 * certificate), a certificate the trust store does not know is the receiver's `tls_error`, and
 * keep-alive reuses the TLS connection.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect, createSecureContext, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { isServiceFault } from '../../lambdas/domain/delivery-lifecycle';
import { createHttpSender, type Connector, type SendInput } from '../../lambdas/pipeline/http-sender';

/** A self-signed P-256 certificate for `hooks.example.test` (test only; valid until 2126). */
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglEOZwqc4RUz52Q0a
LOn0xVVT9HJhXYvxZHCWPmyJxdihRANCAAQK0OOg5hF2nYxYg1VRdgVnWLR//KA4
JdXyi71+Bzd+jwgPk7GYFtt/sm+gMMkLp0KLC32LWJC/BEVu9QyZCRG5
-----END PRIVATE KEY-----
`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBsDCCAVagAwIBAgIUJcxG7oNySU32zVyd3bpEFkfDVpcwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSaG9va3MuZXhhbXBsZS50ZXN0MCAXDTI2MTEyNjEyNTYwN1oY
DzIxMjYxMTAyMTI1NjA3WjAdMRswGQYDVQQDDBJob29rcy5leGFtcGxlLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQK0OOg5hF2nYxYg1VRdgVnWLR//KA4
JdXyi71+Bzd+jwgPk7GYFtt/sm+gMMkLp0KLC32LWJC/BEVu9QyZCRG5o3IwcDAd
BgNVHQ4EFgQU9+oQJ/FtSw0u/psXiOOCAugAy7QwHwYDVR0jBBgwFoAU9+oQJ/Ft
Sw0u/psXiOOCAugAy7QwHQYDVR0RBBYwFIISaG9va3MuZXhhbXBsZS50ZXN0MA8G
A1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAJDkaIHuNw+zaqXt2RrS
uKakukEBtTlzYH+J/8G0pKqlAiBNb2MkdnoUQSBdQWKgIH1fPDUWdKqS6Iho/eeS
3/WXRA==
-----END CERTIFICATE-----
`;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

/** An https receiver on 127.0.0.1 answering 204; it keeps the SNI name of every handshake and counts completed TLS connections. */
async function tlsReceiver() {
  const sni: string[] = [];
  const hosts: string[] = [];
  const counts = { secureConnections: 0 };
  const context = createSecureContext({ key: KEY, cert: CERT });
  const server: Server = createServer(
    {
      key: KEY,
      cert: CERT,
      SNICallback: (servername, callback) => {
        sni.push(servername);
        callback(null, context);
      },
    },
    (req, res) => {
      hosts.push(req.headers.host ?? '');
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    },
  );
  server.on('secureConnection', (_socket: TLSSocket) => counts.secureConnections++);
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const port = (server.address() as AddressInfo).port;
  stops.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
  return { port, sni, hosts, counts };
}

const limits = { deadlineMs: 2_000, bodyReadMs: 300, bodyCapBytes: 2048 };
/** A POST to `https://<host>:<port>/hook`, pinned to 127.0.0.1 (the name itself resolves nowhere). */
const post = (host: string, port: number): SendInput => ({
  url: new URL(`https://${host}:${port}/hook`),
  headers: { 'content-type': 'application/json' },
  body: '{}',
  pinned: { address: '127.0.0.1', family: 4 },
});

/** The connect Node would make, with the test certificate trusted (the options carry the pinned lookup and the servername). */
const trusting: Connector = (options, callback) => callback(null, connect({ ...options, ca: CERT }));

describe('TLS to a pinned address', () => {
  it('names the host (SNI) at the pinned address; a certificate no trusted CA signed is the receiver’s tls_error', async () => {
    const r = await tlsReceiver();
    const result = await createHttpSender(limits)(post('hooks.example.test', r.port));
    expect(result).toMatchObject({ kind: 'error', reason: expect.stringMatching(/^tls_error: /) });
    expect(isServiceFault(result.kind === 'error' ? result.reason : null)).toBe(false);
    expect(r.sni).toEqual(['hooks.example.test']);
    expect(r.hosts).toEqual([]);
  });

  it('verifies the certificate against the host name, not the address: one TLS connection serves two POSTs', async () => {
    const r = await tlsReceiver();
    const send = createHttpSender(limits, { connector: () => trusting });
    for (let i = 0; i < 2; i++) expect(await send(post('hooks.example.test', r.port))).toMatchObject({ kind: 'response', status: 204 });
    expect(r.counts.secureConnections).toBe(1);
    expect(r.sni).toEqual(['hooks.example.test']);
    expect(r.hosts).toEqual([`hooks.example.test:${r.port}`, `hooks.example.test:${r.port}`]);
  });

  it('a certificate for another name fails, even at the address the name is pinned to', async () => {
    const r = await tlsReceiver();
    const result = await createHttpSender(limits, { connector: () => trusting })(post('other.example.test', r.port));
    expect(result).toMatchObject({ kind: 'error', reason: 'tls_error: ERR_TLS_CERT_ALTNAME_INVALID' });
    expect(r.sni).toEqual(['other.example.test']);
    expect(r.hosts).toEqual([]);
  });
});
