import express from 'express';
import { describe, expect, it } from 'vitest';
import { expectSameBytes, listenedPair, rawAnswer } from '../helpers/raw-http.ts';
import { leanJson } from '../../src/lib/http.ts';

// leanJson (src/lib/http.ts, issue 28.2) must answer byte for byte what Express's res.json answers:
// two apps with the same routes, one with it and one without, asked the same raw requests.
const big = { object: 'list', data: Array.from({ length: 40 }, (_, i) => ({ id: `cus_${i}`, name: 'Zoë “quoted” ✓', n: i })) };
const routes = (app: express.Express) => {
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/small', (_req, res) => void res.json({ a: 1, b: 'é' }));
  app.get('/big', (_req, res) => void res.json(big));
  app.post('/created', (_req, res) => void res.status(201).json({ ok: true }));
  app.get('/typed', (_req, res) => void res.type('application/vnd.api+json').json({ a: 1 }));
  app.get('/none', (_req, res) => void res.status(204).json({ a: 1 }));
  app.get('/undefined', (_req, res) => void res.json(undefined));
  app.get('/string', (_req, res) => void res.json('text'));
  app.get('/error', (_req, res) => void res.status(400).json({ error: { type: 'invalid_request_error', message: '<b>&' } }));
};

const apps = listenedPair(
  () => {
    const a = express();
    leanJson(a);
    routes(a);
    return a;
  },
  () => {
    const b = express();
    routes(b);
    return b;
  },
);

describe('leanJson', () => {
  const cases: Array<[string, string]> = [
    ['a small object', 'GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a body of more than 1,000 characters with non-ASCII text', 'GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['another status', 'POST /created HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'],
    ['a content type set before', 'GET /typed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a 204', 'GET /none HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['undefined', 'GET /undefined HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['a string', 'GET /string HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['an error object', 'GET /error HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['HEAD', 'HEAD /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['If-None-Match: * (Express answers 304)', 'GET /small HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\nConnection: close\r\n\r\n'],
    ['If-Modified-Since', 'GET /small HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Wed, 21 Oct 2015 07:28:00 GMT\r\nConnection: close\r\n\r\n'],
  ];
  for (const [name, request] of cases) {
    it(`when a route answers ${name}, then the bytes are Express's own`, async () => {
      await expectSameBytes(apps, request);
    });
  }

  it('when the body is long, then its Content-Length counts its bytes and it reads back as the object sent', async () => {
    const answer = await rawAnswer(apps.lean.port, 'GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(answer).toContain('Content-Type: application/json; charset=utf-8\r\n');
    expect(answer).toContain(`Content-Length: ${Buffer.byteLength(body, 'latin1')}\r\n`);
    expect(JSON.parse(Buffer.from(body, 'latin1').toString('utf8'))).toEqual(big);
  });
});
