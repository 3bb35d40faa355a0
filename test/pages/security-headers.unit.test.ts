import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostedPageSecurity } from '../../src/pages/security.ts';
import { PAGE_CSS_HASH } from '../../src/pages/layout.ts';

// hostedPageSecurity reads helmet's headers once and sets them from a list (issue 28): a page must
// get the headers helmet itself sets, with the same values, in the same order.
const HELMET = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], styleSrc: [PAGE_CSS_HASH], imgSrc: ["'self'", 'data:'], formAction: ["'self'"], frameAncestors: ["'none'"], baseUri: ["'none'"] },
  },
  referrerPolicy: { policy: 'no-referrer' as const },
  frameguard: { action: 'deny' as const },
  crossOriginResourcePolicy: { policy: 'same-origin' as const },
};

let server: ReturnType<express.Express['listen']>;
let url = '';
beforeAll(async () => {
  const app = express();
  app.disable('x-powered-by');
  app.get('/ours', hostedPageSecurity(), (_req, res) => void res.send('ok'));
  app.get('/helmet', (_req, res, next) => (res.setHeader('Cache-Control', 'no-store'), next()), helmet(HELMET), (_req, res) => void res.send('ok'));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

/** The answer's headers as sent, in order (fetch's Headers would sort them), without the clock's. */
const headersOf = (path: string) =>
  new Promise<Array<[string, string]>>((resolve, reject) => {
    http
      .get(`${url}${path}`, (res) => {
        res.resume();
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        resolve(pairs.filter(([k]) => k !== 'date' && k !== 'etag'));
      })
      .on('error', reject);
  });

describe('hosted page security headers', () => {
  it('when a page is answered, then its headers are those helmet sets, with the same values and order', async () => {
    const ours = await headersOf('/ours');
    expect(ours).toEqual(await headersOf('/helmet'));
    expect(ours.map(([k]) => k)).toEqual(expect.arrayContaining(['content-security-policy', 'strict-transport-security', 'x-frame-options', 'cache-control']));
  });
});
