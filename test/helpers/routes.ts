import type { Router } from 'express';

/** One route of an Express router: its method, its path under the mount, and its handlers. */
export interface RouteEntry {
  method: string;
  path: string;
  handlers: Array<(...args: never[]) => unknown>;
}

interface LayerLike {
  route?: { path: string; methods: Record<string, boolean>; stack: Array<{ handle: (...args: never[]) => unknown }> };
}

/**
 * The routes a router declares (its own, not those of routers mounted inside it), read from the
 * router itself: a route added later is walked by the tests that use this, with nobody listing it.
 */
export function routesOf(router: Router, mount = ''): RouteEntry[] {
  const out: RouteEntry[] = [];
  for (const layer of router.stack as unknown as LayerLike[]) {
    if (!layer.route) continue;
    for (const method of Object.keys(layer.route.methods)) {
      if (method === '_all') continue;
      const path = `${mount}${layer.route.path === '/' && mount ? '' : layer.route.path}`;
      out.push({ method: method.toUpperCase(), path: path || '/', handlers: layer.route.stack.map((l) => l.handle) });
    }
  }
  return out;
}
