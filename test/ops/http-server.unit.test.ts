import type { IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenGracefully, type GracefulServer } from '../../src/ops/http-server.ts';
import { rawAnswer } from '../helpers/raw-http.ts';
import { eventually } from '../helpers/wait.ts';

// The web process's server (src/ops/http-server.ts): a request without a body is handed over
// already read (Node's optimizeEmptyRequests, issue 28), one with a body as a stream to read.
describe('the graceful HTTP server', () => {
  let web: GracefulServer;
  let port: number;
  const seen: Array<{ method: string; endedAtOnce: boolean }> = [];
  beforeAll(async () => {
    web = await listenGracefully((req: IncomingMessage, res) => {
      seen.push({ method: req.method!, endedAtOnce: req.readableEnded });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      const answer = () => res.end(`${req.method} ${req.url} [${Buffer.concat(chunks).toString()}]`);
      if (req.readableEnded) answer();
      else req.on('end', answer);
    }, 0);
    port = (web.server.address() as AddressInfo).port;
  });
  afterAll(() => web.drain({ idleGraceMs: 0, forceAfterMs: 1000 }));

  it('when requests with and without bodies come pipelined on one connection, then each is answered in order with its own body', async () => {
    seen.length = 0;
    const answer = await rawAnswer(
      port,
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' +
        'POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' +
        'POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' +
        'GET /d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const bodies = answer.split('\r\n\r\n').slice(1).map((part) => part.split('HTTP/1.1')[0]);
    expect(bodies).toEqual(['GET /a []', 'POST /b [hello]', 'POST /c [abc]', 'GET /d []']);
    // Without a body, nothing is left to read when the handler runs; with one, the body follows.
    expect(seen).toEqual([
      { method: 'GET', endedAtOnce: true },
      { method: 'POST', endedAtOnce: false },
      { method: 'POST', endedAtOnce: false },
      { method: 'GET', endedAtOnce: true },
    ]);
  });
});

/** A raw keep-alive connection: what it has received, and whether the server has closed it. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  const ended = new Promise<void>((r) => socket.once('close', () => ((closed = true), r())));
  socket.on('error', () => {});
  return {
    ready: new Promise((r) => socket.once('connect', r)),
    send: (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`),
    received: () => received,
    closed: () => closed,
    ended,
  };
}

// The drain keeps no record per request: what a connection is answering is Node's own (the socket's
// current response). Each case on a server of its own, since a drain ends it.
describe('the drain', () => {
  it('when answers are in progress, sent or not, pipelined, or come in during the drain, then each ends, says Connection: close or is followed by the close, and idle connections are closed after the grace', async () => {
    const held = new Map<string, () => void>();
    const web = await listenGracefully((req: IncomingMessage, res) => {
      const path = req.url!;
      if (path.startsWith('/streaming')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('part 1;');
        held.set(path, () => res.end('part 2'));
      } else if (path.startsWith('/held')) held.set(path, () => res.end(`answer ${path}`));
      else res.end(`answer ${path}`);
    }, 0);
    const port = (web.server.address() as AddressInfo).port;
    const streaming = rawConnection(port);
    const held1 = rawConnection(port);
    const pipelined = rawConnection(port);
    const idle = rawConnection(port);
    const late = rawConnection(port);
    await Promise.all([streaming, held1, pipelined, idle, late].map((c) => c.ready));
    streaming.send('/streaming');
    held1.send('/held-1');
    pipelined.send('/first');
    pipelined.send('/held-2');
    late.send('/first');
    await eventually(async () => held.size === 3 && streaming.received().includes('part 1;') && late.received().includes('answer /first'), 2000, 5);

    // Each connection with an answer to give is closed right after it, well before the idle grace.
    const drained = web.drain({ idleGraceMs: 1500, forceAfterMs: 5000 });
    // A request on a connection opened before the drain: answered, told the connection closes, closed.
    late.send('/second');
    await eventually(async () => late.closed(), 500, 5);
    expect(late.received()).toMatch(/answer \/first[\s\S]*Connection: close[\s\S]*answer \/second$/);

    // An answer whose headers went out (keep-alive) before the drain: finished, then the connection closes.
    held.get('/streaming')!();
    await eventually(async () => streaming.closed(), 500, 5);
    expect(streaming.received()).toMatch(/Connection: keep-alive[\s\S]*part 1;[\s\S]*part 2/);

    // An answer not yet begun says Connection: close.
    held.get('/held-1')!();
    await eventually(async () => held1.closed(), 500, 5);
    expect(held1.received()).toMatch(/Connection: close[\s\S]*answer \/held-1$/);
    // Pipelined behind an answer sent before the drain (keep-alive): it says close, and the connection closes.
    held.get('/held-2')!();
    await eventually(async () => pipelined.closed(), 500, 5);
    expect(pipelined.received()).toMatch(/Connection: keep-alive[\s\S]*answer \/first[\s\S]*Connection: close[\s\S]*answer \/held-2$/);

    // The connection with nothing to answer is closed after the grace; then the drain is over, nothing cut.
    expect(idle.closed()).toBe(false);
    await eventually(async () => idle.closed(), 3000, 5);
    expect(await drained).toEqual({ cut: 0 });
  });

  it('when an answer never ends, then its connection is cut at forceAfterMs and counted', async () => {
    const web = await listenGracefully(() => {}, 0);
    const port = (web.server.address() as AddressInfo).port;
    const stuck = rawConnection(port);
    const idle = rawConnection(port);
    await Promise.all([stuck.ready, idle.ready]);
    stuck.send('/never');
    await new Promise((r) => setTimeout(r, 50));
    expect(await web.drain({ idleGraceMs: 10, forceAfterMs: 300 })).toEqual({ cut: 1 });
    await Promise.all([stuck.ended, idle.ended]);
  });
});
