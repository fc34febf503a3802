/**
 * bin/local/dynamodb-local.ts: with a JDK, DynamoDB Local listens on 127.0.0.1 only (the loopback
 * launcher), so nobody else on the network can read or write the local tables; and stopping it
 * ends its process.
 */
import { connect, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { javaCanCompile, startDynamoDbLocal, type DynamoDbLocal } from '../../bin/local/dynamodb-local';
import { createTableContext } from '../../lambdas/store/client';

/** This machine's first non-loopback IPv4 address, if any. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === 'IPv4' && !a.internal)?.address;

/** Resolves with how a TCP connection to `host:port` ended: 'connected' or the error code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((done) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => {
      socket.destroy();
      done('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      done('timeout');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

const skipReason = !externalAddress
  ? 'this machine has no non-loopback IPv4 address to connect from'
  : !javaCanCompile()
    ? 'the Java on the PATH is a runtime without jdk.compiler: DynamoDB Local falls back to listening on all interfaces (a JDK is needed for the loopback bind)'
    : undefined;

let dynamo: DynamoDbLocal | undefined;

beforeAll(async () => {
  if (!skipReason) dynamo = await startDynamoDbLocal();
});

afterAll(async () => {
  await dynamo?.stop();
});

it.skipIf(skipReason)(`listens on 127.0.0.1 only (${skipReason ?? `not on ${externalAddress}`})`, async () => {
  if (!dynamo) throw new Error('DynamoDB Local did not start');
  expect(dynamo.loopbackOnly).toBe(true);
  const port = Number(new URL(dynamo.endpoint).port);
  expect(new URL(dynamo.endpoint).hostname).toBe('127.0.0.1');

  const table = createTableContext({ tableName: 'probe', endpoint: dynamo.endpoint });
  try {
    expect((await table.doc.send(new ListTablesCommand({}))).TableNames).toBeInstanceOf(Array);
  } finally {
    table.doc.destroy();
  }
  expect(await tryConnect('127.0.0.1', port)).toBe('connected');
  expect(await tryConnect(externalAddress!, port)).toBe('ECONNREFUSED');

  // The control: a server on every interface is reachable at that address, so the refusal above is the bind's.
  const wildcard = createServer((socket) => socket.destroy());
  await new Promise<void>((listening) => wildcard.listen(0, '0.0.0.0', listening));
  try {
    const address = wildcard.address();
    expect(await tryConnect(externalAddress!, typeof address === 'object' && address ? address.port : 0)).toBe('connected');
  } finally {
    await new Promise((closed) => wildcard.close(closed));
  }
});

it.skipIf(skipReason)('stop() ends the DynamoDB Local process', async () => {
  if (!dynamo) throw new Error('DynamoDB Local did not start');
  const { pid } = dynamo;
  expect(() => process.kill(pid, 0)).not.toThrow();
  await dynamo.stop();
  dynamo = undefined;
  expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
});
