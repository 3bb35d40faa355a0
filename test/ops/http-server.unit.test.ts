import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenGracefully, type GracefulServer } from '../../src/ops/http-server.ts';
import { rawAnswer } from '../helpers/raw-http.ts';

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
