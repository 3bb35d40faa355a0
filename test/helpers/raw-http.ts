import type express from 'express';
import { afterAll, beforeAll, expect } from 'vitest';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

// For tests that compare an app's answers byte for byte with Express's own (leanJson, sendHtml):
// an app listening on a free port, and the raw answer to a raw request.

export interface Listening {
  port: number;
  close: () => void;
}

export async function listen(app: express.Express): Promise<Listening> {
  const server = app.listen(0);
  await new Promise((r) => server.once('listening', r));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

/** The raw answer to a raw request (which should ask for `Connection: close`), its Date header blanked. */
export async function rawAnswer(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(request);
  await new Promise((r) => socket.once('end', r));
  return Buffer.concat(chunks).toString('latin1').replace(/\r\nDate: [^\r]*/, '\r\nDate: X');
}

/**
 * Two apps listening for the file's tests, made in its beforeAll and closed in its afterAll: `lean`,
 * the one under test, and `plain`, the one answering as Express does.
 */
export function listenedPair(lean: () => express.Express, plain: () => express.Express): { lean: Listening; plain: Listening } {
  const apps = {} as { lean: Listening; plain: Listening };
  beforeAll(async () => {
    apps.lean = await listen(lean());
    apps.plain = await listen(plain());
  });
  afterAll(() => {
    apps.lean?.close();
    apps.plain?.close();
  });
  return apps;
}

/** Asks both apps the same raw request: the answer is an HTTP answer, and the lean app's bytes are the plain one's. */
export async function expectSameBytes(apps: { lean: Listening; plain: Listening }, request: string): Promise<void> {
  const want = await rawAnswer(apps.plain.port, request);
  expect(want).toMatch(/^HTTP\/1\.1 \d{3}/);
  expect(await rawAnswer(apps.lean.port, request)).toBe(want);
}
