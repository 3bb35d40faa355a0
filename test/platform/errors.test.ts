import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const expectErrorShape = (body: any) => {
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({
    type: expect.any(String),
    code: expect.any(String),
    message: expect.any(String),
    ...(body.error.param !== undefined ? { param: expect.any(String) } : {}),
  });
};

describe('errors', () => {
  it('when a route does not exist, then 404 in the error shape', async () => {
    for (const [method, path] of [['GET', '/v1/nope'], ['POST', '/v1/customers/cus_x/nope'], ['GET', '/nope'], ['PUT', '/v1/customers']]) {
      const res = await t.request(method!, path!, { key });
      expect(res.status).toBe(404);
      expectErrorShape(res.body);
      expect(res.body.error.code).toBe('route_not_found');
      expect(res.headers.get('request-id')).toMatch(/^req_/);
    }
  });

  describe.each([
    ['malformed JSON', '{"email":', { 'content-type': 'application/json' }, 400, 'body_invalid_json'],
    ['a JSON string literal', '"hello"', { 'content-type': 'application/json' }, 400, 'body_invalid_json'],
    ['a JSON array', '[1,2]', { 'content-type': 'application/json' }, 400, 'parameter_invalid'],
    ['a JSON null', 'null', { 'content-type': 'application/json' }, 400, 'body_invalid_json'],
    ['a form-encoded body', 'email=a%40b.co', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'content_type_unsupported'],
    ['a text body', 'email', { 'content-type': 'text/plain' }, 415, 'content_type_unsupported'],
    ['a body with no content type', '{"email":"a@b.co"}', {}, 415, 'content_type_unsupported'],
    ['a latin-1 JSON body', '{"email":"a@b.co"}', { 'content-type': 'application/json; charset=latin1' }, 415, 'content_type_unsupported'],
  ])('when POST /v1/customers carries %s', (_name, rawBody, headers, status, code) => {
    it(`then ${status} ${code}`, async () => {
      const res = await t.request('POST', '/v1/customers', { key, rawBody, headers });
      expect(res.status).toBe(status);
      expectErrorShape(res.body);
      expect(res.body.error.code).toBe(code);
    });
  });

  it('when a JSON body has charset=UTF-8, leading white space or a byte order mark, then it is read as express.json() reads it', async () => {
    for (const [rawBody, type] of [
      ['{"email":"charset@example.com"}', 'application/json; charset=UTF-8'],
      [' \n {"email":"space@example.com"}', 'application/json'],
      ['\uFEFF{"email":"bom@example.com"}', 'application/json'],
    ] as const) {
      const res = await t.request('POST', '/v1/customers', { key, rawBody, headers: { 'content-type': type } });
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('customer');
    }
  });

  it('when a body is over 1 MB, then 413 in the error shape and nothing is stored', async () => {
    const body = JSON.stringify({ email: 'big@example.com', notes: 'x'.repeat(1024 * 1024) });
    const res = await t.request('POST', '/v1/customers', { key, rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expectErrorShape(res.body);
    expect(res.body.error.code).toBe('body_too_large');
    expect(await t.sql`select 1 from customers where email = 'big@example.com'`).toHaveLength(0);
  });

  it('when a body is just under 1 MB, then it reaches validation (notes is too long: 400, not 413)', async () => {
    const body = JSON.stringify({ email: 'big@example.com', notes: 'x'.repeat(1000 * 1000) });
    const res = await t.request('POST', '/v1/customers', { key, rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('notes');
  });

  it('when an unknown field is sent, then 400 parameter_unknown names it', async () => {
    const res = await t.request('POST', '/v1/customers', { key, body: { email: 'a@b.co', amount_cents: 5 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'parameter_unknown',
      message: 'Received unknown parameter: amount_cents',
      param: 'amount_cents',
    });
  });

  // A sweep of odd inputs: none may produce a 5xx.
  const oddBodies: unknown[] = [
    {}, [], 0, true, 'x', { email: {} }, { email: ['a@b.co'] }, { metadata: 'x', email: 'a@b.co' },
    { email: 'a@b.co', metadata: { '': 'v' } }, { email: 'a@b.co', metadata: { 'a[b]': 'v' } }, { email: 'a@b.co', metadata: { k: null } },
    { email: 'a@b.co', __proto__: { polluted: true } }, { email: 'a@b.co', constructor: { prototype: { x: 1 } } },
    { email: 'a\u0000@b.co' }, { email: 'a@b.co', first_name: '\u0000' }, { email: 'a@b.co', phone: 12345 },
    { email: `${'a'.repeat(490)}@b.co` }, { email: 'é@ü.de' }, { email: 'a@b.co', notes: '😀'.repeat(2500) },
  ];
  it.each(oddBodies.map((b) => [JSON.stringify(b), b]))('when POST /v1/customers gets %s, then the answer is not a 5xx', async (_s, body) => {
    const res = await t.request('POST', '/v1/customers', { key, body });
    expect(res.status).toBeLessThan(500);
    if (res.status >= 400) expectErrorShape(res.body);
  });

  // The body's text decides whether its strings are walked (src/lib/http.ts, src/lib/validate.ts):
  // only a \u escape can put a NUL or an unpaired surrogate into a parsed string.
  it('when a body holds NUL or an unpaired surrogate as an escape, then 400 naming the field; raw UTF-8 and bad bytes are stored as read', async () => {
    const send = (text: string | Buffer) =>
      fetch(`${t.url}/v1/customers`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
    for (const [text, param, code] of [
      ['{"email":"a@b.co","first_name":"x\\u0000"}', 'first_name', 'nul'],
      ['{"email":"a@b.co","metadata":{"k":"\\ud800"}}', 'metadata[k]', 'surrogate'],
      ['{"email":"a@b.co","metadata":{"\\udfff":"v"}}', 'metadata[\udfff]', 'surrogate'],
    ] as const) {
      const res = await send(text);
      expect(res.status, text).toBe(400);
      const body = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(body.error, text).toMatchObject({ code: 'parameter_invalid', param });
      expect(body.error.message).toMatch(code === 'nul' ? /NUL/ : /surrogate/);
    }
    const utf8 = await send('{"email":"utf8@b.co","first_name":"Zoë 😀"}');
    expect(utf8.status).toBe(200);
    expect(((await utf8.json()) as { first_name: string }).first_name).toBe('Zoë 😀');
    // Bytes that are not UTF-8 (a lone surrogate encoded as CESU-8, and 0xff) are read as U+FFFD.
    const bad = await send(Buffer.concat([Buffer.from('{"email":"bytes@b.co","first_name":"'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}')]));
    expect(bad.status).toBe(200);
    const [row] = await t.sql<{ first_name: string }[]>`select first_name from customers where email = 'bytes@b.co'`;
    expect(row!.first_name.isWellFormed()).toBe(true);
    expect(row!.first_name).toMatch(/^\ufffd+$/);
  });

  it.each(['%', '%zz', 'cus_%00', 'a'.repeat(5000), '..', "cus_' or 1=1 --"])('when GET /v1/customers/%s, then 4xx and no 5xx', async (id) => {
    const res = await t.request('GET', `/v1/customers/${encodeURIComponent(id)}`, { key });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it('when a raw malformed path escape is sent, then 4xx in the error shape', async () => {
    const res = await fetch(`${t.url}/v1/customers/%E0%A4%A`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe('probes', () => {
  it('when /healthz and /readyz are called without a key, then both answer 200', async () => {
    const h = await t.request('GET', '/healthz');
    expect(h.status).toBe(200);
    const r = await t.request('GET', '/readyz');
    expect(r.status).toBe(200);
    // No repair pass has run against this database yet: the section is there, empty (issue 23).
    expect(r.body).toMatchObject({ status: 'ok', checks: { postgres: 'ok', redis: 'ok' }, repair: { stale_after_seconds: 900, passes: {} } });
    expect(Object.keys(r.body).sort()).toEqual(['checks', 'config', 'repair', 'status']);
  });
});
