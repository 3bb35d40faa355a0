import type { Request, RequestHandler, Response } from 'express';
import { refuseUnreadableInput } from './input.ts';

/**
 * Finds what a hosted page's URL names (a checkout session, a payment link). Three answers:
 * the row; null when the URL segment cannot name one, so the request goes on to the next router
 * (both page routers may be mounted at the root); undefined when it has answered already (its
 * 404 page).
 */
export type PageLoader<T> = (req: Request, res: Response) => Promise<T | null | undefined>;

/** The page's own fields whose problems it names beside the input (see refuseUnreadableInput). */
type Shown<T> = readonly string[] | ((row: T) => readonly string[]);

/**
 * The guard every hosted-page route starts with, written once: load the row (or pass on, or stop
 * after the loader's answer), refuse unreadable query strings and form fields with a page, then
 * run `handle` with the row.
 */
export function pageRoutes<T>(load: PageLoader<T>) {
  return (handle: (req: Request, res: Response, row: T) => Promise<unknown>, shown: Shown<T> = []): RequestHandler =>
    async (req, res, next) => {
      const row = await load(req, res);
      if (row === null) return next();
      if (row === undefined || refuseUnreadableInput(req, res, typeof shown === 'function' ? shown(row) : shown)) return;
      await handle(req, res, row);
    };
}
