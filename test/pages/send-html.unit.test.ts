import express from 'express';
import { describe, expect, it } from 'vitest';
import { expectSameBytes, listenedPair, rawAnswer } from '../helpers/raw-http.ts';
import { sendHtml } from '../../src/pages/html.ts';

// sendHtml (src/pages/html.ts, issue 28) must answer byte for byte what Express's
// res.status(s).type('html').send(body) answers: two apps with the same routes, one sending through
// it and one through Express, asked the same raw requests.
const long = `<!doctype html><title>Zoë “quoted” ✓</title>${'<p>Tea &amp; cake, 12 € ✓</p>'.repeat(80)}`;
const routes = (app: express.Express, send: (res: express.Response, status: number, body: string) => void) => {
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/short', (_req, res) => send(res, 200, '<p>ok</p>'));
  app.get('/long', (_req, res) => send(res, 200, long));
  app.get('/missing', (_req, res) => send(res, 404, long));
  app.post('/refused', (_req, res) => {
    res.setHeader('Retry-After', '2');
    send(res, 503, '<p>later</p>');
  });
  app.get('/empty', (_req, res) => send(res, 200, ''));
};

const apps = listenedPair(
  () => {
    const a = express();
    routes(a, sendHtml);
    return a;
  },
  () => {
    const b = express();
    routes(b, (res, status, body) => void res.status(status).type('html').send(body));
    return b;
  },
);

describe('sendHtml', () => {
  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`;
  const cases: Array<[string, string]> = [
    ['a short page', get('/short')],
    ['a page of more than 1,000 characters with non-ASCII text', get('/long')],
    ['another status', get('/missing')],
    ['a header set before and a POST', 'POST /refused HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'],
    ['an empty page', get('/empty')],
    ['HEAD', 'HEAD /long HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['If-None-Match: * (Express answers 304)', get('/long', 'If-None-Match: *\r\n')],
    ['If-None-Match with a tag', get('/long', 'If-None-Match: "abc"\r\n')],
    ['If-Modified-Since', get('/short', 'If-Modified-Since: Wed, 21 Oct 2015 07:28:00 GMT\r\n')],
  ];
  for (const [name, request] of cases) {
    it(`when a route sends ${name}, then the bytes are Express's own`, async () => {
      await expectSameBytes(apps, request);
    });
  }

  it('when the page is long, then its Content-Length counts its bytes and it reads back as sent', async () => {
    const answer = Buffer.from(await rawAnswer(apps.lean.port, get('/long')), 'latin1');
    const at = answer.indexOf('\r\n\r\n');
    const body = answer.subarray(at + 4);
    expect(answer.subarray(0, at).toString()).toContain(`Content-Length: ${Buffer.byteLength(long)}`);
    expect(body.toString('utf8')).toBe(long);
  });
});
