import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedHeaders, headerOf, setLater, setLaterAll } from '../../src/lib/headers.ts';

// Headers kept until the head is written (src/lib/headers.ts): written as setHeader would have
// written them, whether or not other headers were set the ordinary way.

const routes: Record<string, (res: Response) => void> = {
  // Kept only: Node is handed the list.
  '/kept': (res) => {
    setLater(res, 'Request-Id', 'req_1');
    setLater(res, 'X-Frame-Options', 'DENY');
    setLater(res, 'x-frame-options', 'SAMEORIGIN'); // the same header, another spelling: replaced in place
    setLater(res, 'Set-Cookie', 'a=1', true);
    setLater(res, 'Set-Cookie', 'b=2', true);
    res.status(201).end('kept');
  },
  // Kept, then set the ordinary way: the ordinary one wins under its name, the kept come first.
  '/mixed': (res) => {
    setLater(res, 'Request-Id', 'req_2');
    setLater(res, 'Cache-Control', 'no-store');
    setLater(res, 'Set-Cookie', 'csrf=1', true);
    res.setHeader('Cache-Control', 'public, max-age=60');
    res.append('Set-Cookie', 'session=2');
    res.type('text/plain').send('mixed');
  },
  // Set the ordinary way first, then kept under the same name: set again the ordinary way (setHeader's answer).
  '/over': (res) => {
    res.setHeader('Content-Security-Policy', "default-src 'none'");
    setLater(res, 'Content-Security-Policy', `${headerOf(res, 'Content-Security-Policy')};img-src 'self'`);
    setLater(res, 'Request-Id', 'req_3');
    res.end('over');
  },
  // Kept, then rewritten through headerOf (as a page's CSP is), then set the ordinary way, then kept again: the last one counts.
  '/rewrite': (res) => {
    setLater(res, 'Content-Security-Policy', "default-src 'none'");
    setLater(res, 'Content-Security-Policy', `${headerOf(res, 'content-security-policy')};form-action 'self'`);
    res.setHeader('Content-Security-Policy', 'ordinary');
    setLater(res, 'Content-Security-Policy', 'last');
    res.end('rewrite');
  },
  // writeHead called with headers and a reason of its own.
  '/explicit': (res) => {
    setLater(res, 'Request-Id', 'req_4');
    setLater(res, 'X-Kept', 'kept');
    res.writeHead(202, 'Taken', { 'X-Kept': 'given', 'X-Given': 'yes' });
    res.end();
  },
  '/none': (res) => void res.end('none'),
  // Kept after the head is written: refused as setHeader refuses it, not dropped.
  '/late': (res) => {
    res.writeHead(200);
    let refused = '';
    try {
      setLater(res, 'X-Late', '1');
    } catch (err) {
      refused = (err as { code?: string }).code ?? 'thrown';
    }
    res.end(refused);
  },
  // A fixed list after the request id: appended as it is.
  '/fixed': (res) => {
    setLater(res, 'Request-Id', 'req_5');
    setLaterAll(res, FIXED);
    res.end('fixed');
  },
  // A fixed list over headers already kept or set the ordinary way under its names: each replaced, as setHeader would.
  '/fixed-over': (res) => {
    setLater(res, 'cache-control', 'public');
    res.setHeader('X-Frame-Options', 'SAMEORIGIN');
    setLaterAll(res, FIXED);
    res.end('over');
  },
};
const FIXED = fixedHeaders([['Cache-Control', 'no-store'], ['X-Frame-Options', 'DENY']]);

let server: http.Server;
let base = '';
beforeAll(async () => {
  const app = express();
  app.disable('x-powered-by');
  for (const [path, handle] of Object.entries(routes)) app.all(path, (_req, res) => handle(res));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

/** The status, reason and headers as sent, in order, names lowercased, without Date, Connection and Keep-Alive. */
const answer = (path: string, method = 'GET') =>
  new Promise<{ status: number; reason: string; headers: Array<[string, string]>; body: string }>((resolve, reject) => {
    http
      .request(`${base}${path}`, { method }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const headers: Array<[string, string]> = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
          resolve({ status: res.statusCode!, reason: res.statusMessage!, headers: headers.filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)), body });
        });
      })
      .on('error', reject)
      .end();
  });

describe('headers kept until the head is written', () => {
  it('when only kept headers are set, then they are written in their order, one per name but Set-Cookie', async () => {
    const a = await answer('/kept');
    expect(a.status).toBe(201);
    expect(a.body).toBe('kept');
    expect(a.headers).toEqual([
      ['request-id', 'req_1'],
      ['x-frame-options', 'SAMEORIGIN'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['content-length', '4'],
    ]);
  });

  it('when headers are also set the ordinary way, then those win under their name, both cookies are kept, the kept come first', async () => {
    const a = await answer('/mixed');
    expect(a.body).toBe('mixed');
    expect(a.headers).toEqual([
      ['request-id', 'req_2'],
      ['set-cookie', 'csrf=1'],
      ['set-cookie', 'session=2'], // one header of that name, written as two lines
      ['cache-control', 'public, max-age=60'],
      ['content-type', 'text/plain; charset=utf-8'],
      ['content-length', '5'],
      ['etag', expect.any(String) as string],
    ]);
  });

  it('when a header set the ordinary way is set again kept, then it is replaced, and headerOf read it first; the kept come first', async () => {
    const a = await answer('/over');
    expect(a.headers).toEqual([
      ['request-id', 'req_3'],
      ['content-security-policy', "default-src 'none';img-src 'self'"],
      ['content-length', '4'],
    ]);
  });

  it('when a header is kept, rewritten, set the ordinary way and kept again, then the last value is written once', async () => {
    const a = await answer('/rewrite');
    expect(a.headers.filter(([k]) => k === 'content-security-policy')).toEqual([['content-security-policy', 'last']]);
  });

  it('when writeHead is given headers and a reason, then those win, the kept are written too, the reason is kept', async () => {
    const a = await answer('/explicit');
    expect([a.status, a.reason]).toEqual([202, 'Taken']);
    expect(a.headers).toEqual(expect.arrayContaining([['request-id', 'req_4'], ['x-kept', 'given'], ['x-given', 'yes']]));
    expect(a.headers.filter(([k]) => k === 'x-kept')).toHaveLength(1);
  });

  it('when a HEAD is answered, then the kept headers are written without a body', async () => {
    const a = await answer('/kept', 'HEAD');
    expect(a.body).toBe('');
    expect(a.headers.slice(0, 4)).toEqual([
      ['request-id', 'req_1'],
      ['x-frame-options', 'SAMEORIGIN'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
    ]);
  });

  it('when a fixed list is kept, then it follows what was kept before; under a name already set it replaces that header', async () => {
    expect((await answer('/fixed')).headers).toEqual([
      ['request-id', 'req_5'],
      ['cache-control', 'no-store'],
      ['x-frame-options', 'DENY'],
      ['content-length', '5'],
    ]);
    expect((await answer('/fixed-over')).headers).toEqual([
      ['cache-control', 'no-store'],
      ['x-frame-options', 'DENY'],
      ['content-length', '4'],
    ]);
    expect(() => fixedHeaders([['A', '1'], ['a', '2']])).toThrow(/twice/);
  });

  it('when a header is kept after the head is written, then it is refused as setHeader refuses it', async () => {
    expect((await answer('/late')).body).toBe('ERR_HTTP_HEADERS_SENT');
  });

  it('when nothing is kept, then the answer is written as Node writes it', async () => {
    const a = await answer('/none');
    expect(a.headers).toEqual([['content-length', '4']]);
  });
});
