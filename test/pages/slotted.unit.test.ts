import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendHtml, sendSlotted, SlottedPages } from '../../src/pages/html.ts';

// src/pages/html.ts: a page rendered once around a per-request value, sent as its bytes with the
// value in its slot. What goes out must be what sendHtml sends for the whole text.
const page = (value: string) => `<!doctype html>\n<p>Thé café — ${value} — ✓</p>\n`;

describe('slotted pages', () => {
  it('when a page is asked for again, then it is rendered once, and its bytes around the value are the whole text', () => {
    const pages = new SlottedPages(10);
    let renders = 0;
    const render = (slot: string) => (renders++, page(slot));
    const a = pages.get('k', render)!;
    const b = pages.get('k', render)!;
    expect(renders).toBe(1);
    expect(b).toBe(a);
    expect(Buffer.concat([a.head, Buffer.from('tok'), a.tail]).toString('utf8')).toBe(page('tok'));
  });

  it('when the slot is not in the page exactly once, then nothing is kept and the caller renders as usual', () => {
    const pages = new SlottedPages(10);
    expect(pages.get('none', () => '<p>no slot</p>')).toBeNull();
    expect(pages.get('twice', (slot) => `${slot}<p></p>${slot}`)).toBeNull();
  });

  it('when more pages are asked for than it keeps, then the oldest is dropped and rendered again when asked', () => {
    const pages = new SlottedPages(2);
    let renders = 0;
    const render = (slot: string) => (renders++, page(slot));
    for (const k of ['a', 'b', 'c', 'a']) pages.get(k, render);
    expect(renders).toBe(4);
  });
});

describe('sendSlotted against sendHtml', () => {
  const pages = new SlottedPages(10);
  const app = express();
  app.set('etag', false);
  app.get('/whole', (_req, res) => sendHtml(res, 201, page('tok-é')));
  app.get('/slotted', (_req, res) => sendSlotted(res, 201, pages.get('p', page)!, 'tok-é'));
  let base = '';
  let server: ReturnType<typeof app.listen>;
  beforeAll(async () => {
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  /** Status, headers but Date, and the body's bytes, as a raw HTTP client gets them. */
  const fetchRaw = (path: string, method = 'GET', headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request(`${base}${path}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const { date: _date, ...rest } = res.headers;
          resolve({ status: res.statusCode!, headers: rest, body: Buffer.concat(chunks) });
        });
      });
      req.on('error', reject);
      req.end();
    });

  it.each([
    ['GET', {}],
    ['HEAD', {}],
    ['GET', { 'if-none-match': '"x"' }],
  ] as const)('when asked with %s %o, then the answer is the one sendHtml gives: status, headers and bytes', async (method, headers) => {
    const whole = await fetchRaw('/whole', method, headers);
    const slotted = await fetchRaw('/slotted', method, headers);
    expect(slotted).toEqual(whole);
    if (method === 'GET') {
      expect(slotted.body.toString('utf8')).toBe(page('tok-é'));
      expect(Number(slotted.headers['content-length'])).toBe(slotted.body.length);
    } else expect(slotted.body.length).toBe(0);
  });
});
