import type { Request, Response } from 'express';
import type { Metrics } from './definitions.ts';
import { histogramObserver } from './observer.ts';

/** The route label of a request no route answered (404s, and answers given by middleware before any route). */
export const UNMATCHED = 'unmatched';
/** The route label of a route outside the app's own routers (a mounted sub-application: Bull Board). */
export const OTHER_ROUTE = 'other';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The method label: the usual methods as they are, any other `other` (Node accepts some thirty). */
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'other');

/** What a router (express's or one of its mounted routers) holds: its layers. */
interface RouterLike {
  stack?: Array<{ route?: { path: unknown }; handle?: unknown; rawPath?: unknown }>;
}

/** Joins a mount path and a path below it as express matches them: '/v1' + '/' is '/v1', '' + '/' is '/'. */
export function joinPath(prefix: string, path: string): string {
  const p = path === '/' ? '' : path;
  const joined = prefix.replace(/\/$/, '') + p;
  return joined === '' ? '/' : joined;
}

const pathText = (p: unknown): string => (Array.isArray(p) ? String(p[0] ?? '/') : typeof p === 'string' ? p : String(p));

/**
 * The full path template of every route of a router and the routers mounted in it
 * (`/v1/customers/:id`), keyed by express's Route object, which a request that matched it carries
 * as `req.route`. Read once after the app is built: nothing is worked out per request.
 */
export function routeTemplates(router: RouterLike): WeakMap<object, string> {
  const into = new WeakMap<object, string>();
  const walk = (r: RouterLike, prefix: string) => {
    for (const layer of r.stack ?? []) {
      if (layer.route) {
        if (!into.has(layer.route)) into.set(layer.route, joinPath(prefix, pathText(layer.route.path)));
      } else if (layer.handle && typeof layer.handle === 'function' && Array.isArray((layer.handle as RouterLike).stack)) {
        walk(layer.handle as RouterLike, joinPath(prefix, pathText(layer.rawPath ?? '/')));
      }
    }
  };
  walk(router, '');
  return into;
}

type Observe = (seconds: number) => void;

/**
 * The HTTP histogram's observer for requestContext (src/lib/http.ts): one observation per answered
 * request, under its route template, method and status. The labelled children are kept per
 * (template, method, status), so an answer costs three map lookups and an addition to its entry
 * (histogramObserver): no label object or string is made per request, and no database or Redis is asked.
 */
export function httpMetrics(metrics: Metrics) {
  let templates = new WeakMap<object, string>();
  const children = new Map<string, Map<string, Map<number, Observe>>>();
  const child = (route: string, method: string, status: number): Observe => {
    let byMethod = children.get(route);
    if (!byMethod) children.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let observe = byStatus.get(status);
    if (!observe) {
      observe = histogramObserver(metrics.httpRequestDuration, { route, method, status: String(status) });
      byStatus.set(status, observe);
    }
    return observe;
  };
  return {
    /** Reads the app's routes (call once every route is mounted). */
    indexRoutes(router: RouterLike): void {
      templates = routeTemplates(router);
    },
    observe(req: Request, res: Response, seconds: number): void {
      const route = req.route ? (templates.get(req.route) ?? OTHER_ROUTE) : UNMATCHED;
      child(route, methodLabel(req.method), res.statusCode)(seconds);
    },
  };
}
