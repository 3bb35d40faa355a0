import type { Router } from 'express';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiRouters } from '../../src/app.ts';
import { buildDocument } from '../../src/openapi/document.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

interface Layer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: unknown;
}

/** `METHOD /path` of every route of an express Router, nested routers included, `:id` written `{id}`. */
function routesOf(router: { stack: Layer[] }, prefix: string): string[] {
  const out: string[] = [];
  for (const layer of router.stack) {
    if (layer.route) {
      if (typeof layer.route.path !== 'string') throw new Error(`${prefix}: a route path that is not a string cannot be documented`);
      for (const method of Object.keys(layer.route.methods)) {
        if (method === '_all') throw new Error(`${prefix}${layer.route.path}: .all() routes cannot be documented`);
        out.push(`${method.toUpperCase()} ${openapiPath(prefix + layer.route.path)}`);
      }
    } else if (layer.handle.stack) {
      if (typeof layer.rawPath !== 'string') throw new Error(`${prefix}: a nested router mounted on a pattern cannot be read`);
      out.push(...routesOf(layer.handle as { stack: Layer[] }, prefix + (layer.rawPath === '/' ? '' : layer.rawPath)));
    }
  }
  return out;
}

/** Express `/v1/customers/:id/` → OpenAPI `/v1/customers/{id}`. */
const openapiPath = (p: string) => p.replace(/\/+$/, '').replace(/:([A-Za-z_]\w*)/g, '{$1}') || '/';

const documented = (doc: Record<string, any>) =>
  Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((k) => ['get', 'post', 'patch', 'delete', 'put'].includes(k))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );

describe('the OpenAPI document and the routes the app mounts', () => {
  let served: Record<string, any>;
  let key: string;

  beforeAll(async () => {
    const res = await t.request('GET', '/v1/openapi.json'); // no key
    expect(res.status).toBe(200);
    served = res.body;
    key = (await t.account()).test;
  });

  it('when GET /v1/openapi.json is called without a key, then it answers the document built from the code, cacheable, with an ETag', async () => {
    expect(served).toEqual(buildDocument({ serverUrl: t.s.config.publicBaseUrl }));
    expect(served.openapi).toBe('3.1.0');
    const res = await fetch(`${t.url}/v1/openapi.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const again = await fetch(`${t.url}/v1/openapi.json`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('when every router of /v1 is walked, then its routes are exactly the operations of the document (both ways)', () => {
    const mounted = apiRouters(t.s).flatMap((m) => routesOf(m.router as unknown as Router & { stack: Layer[] }, `/v1${m.path === '/' ? '' : m.path}`));
    expect(mounted.length).toBeGreaterThan(40);
    expect(new Set(mounted).size).toBe(mounted.length); // no route mounted twice
    const inDocument = documented(served);
    expect(mounted.filter((r) => !inDocument.includes(r)).sort(), 'mounted but not documented').toEqual([]);
    expect(inDocument.filter((r) => !mounted.includes(r)).sort(), 'documented but not mounted').toEqual([]);
  });

  it('when each documented operation is called on the running app, then a route answers it (never 404 route_not_found)', async () => {
    for (const op of documented(served)) {
      const [method, path] = op.split(' ') as [string, string];
      const url = path.replaceAll(/\{[^}]+\}/g, 'x_0');
      const res = await t.request(method, url, { key, ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}) });
      expect(res.body?.error?.code, op).not.toBe('route_not_found');
    }
    // ... and a route that is not in the document does not exist.
    expect((await t.request('PUT', '/v1/customers/cus_x', { key, body: {} })).body.error.code).toBe('route_not_found');
  });
});
