import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Router, type RequestHandler } from 'express';
import basicAuth from 'express-basic-auth';
import { ApiError } from '../lib/errors.ts';
import type { Services } from '../services.ts';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * express-basic-auth checks the credentials: its static-users check compares user name and
 * password with its constant-time safeCompare, both halves always (so the timing does not tell
 * which one was wrong). A refusal keeps the API's answer: 401 in the one error shape (missing or
 * invalid credentials), with the Basic challenge that makes a browser ask for them.
 */
function boardGuard(user: string, password: string): RequestHandler {
  return basicAuth({
    users: { [user]: password },
    unauthorizedResponse: (req: Parameters<RequestHandler>[0]) => {
      req.res?.setHeader('WWW-Authenticate', 'Basic realm="Bull Board", charset="UTF-8"');
      const sent = /^Basic [A-Za-z0-9+/=]+$/i.test(req.headers.authorization ?? '');
      return new ApiError(sent ? 'api_key_invalid' : 'api_key_missing', 'Bull Board needs the admin user name and password (HTTP basic auth).').toBody();
    },
  });
}

/** Bull Board's own page links the IBM Plex fonts from Google Fonts; the board falls back to the system's sans-serif. */
const EXTERNAL_FONTS = /^\s*<link href="https:\/\/fonts\.googleapis\.com\/[^"]*" rel="stylesheet">\r?\n/m;

/**
 * The views directory of the board: Bull Board's page template (of the installed version, so its
 * asset names match) without its one external asset, written once into a temporary directory.
 * The operator's browser then loads nothing from outside the service. A template that no longer
 * has that link is used as it is; null (the package's own page) when the copy cannot be written.
 */
async function boardViews(log: Services['log']): Promise<string | null> {
  // The copy @bull-board/api serves the board's assets from (createBullBoard's uiBasePath).
  const api = createRequire(import.meta.url).resolve('@bull-board/api');
  const ui = path.dirname(createRequire(api).resolve('@bull-board/ui/package.json'));
  try {
    const template = await readFile(path.join(ui, 'dist', 'index.ejs'), 'utf8');
    const dir = await mkdtemp(path.join(tmpdir(), 'bull-board-views-'));
    await writeFile(path.join(dir, 'index.ejs'), template.replace(EXTERNAL_FONTS, ''));
    return dir;
  } catch (err) {
    log.warn({ err }, 'Bull Board: its page without the external fonts could not be written; serving its own');
    return null;
  }
}

/** Bull Board's router over every queue of the service. */
async function boardRouter(s: Services): Promise<RequestHandler> {
  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/express'),
  ]);
  const adapter = new ExpressAdapter();
  adapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({ queues: s.queues.all().map((q) => new BullMQAdapter(q)), serverAdapter: adapter as never }); // @bull-board/express pins its own copy of @bull-board/api's types
  const views = await boardViews(s.log);
  if (views) adapter.setViewsPath(views); // after createBullBoard, which sets the package's own
  return adapter.getRouter() as RequestHandler;
}

/**
 * Bull Board over every queue of the service (inspect, retry failed jobs), behind HTTP basic auth
 * from ADMIN_USER / ADMIN_PASSWORD. Without both, null: the board is not mounted at all. The board
 * (its packages and their UI) is built on the first request that passes the guard, not at start.
 */
export function adminQueuesRouter(s: Services): Router | null {
  if (!s.config.admin) return null;
  let board: Promise<RequestHandler> | undefined;
  const r = Router();
  r.use(boardGuard(s.config.admin.user, s.config.admin.password));
  // A failed build is tried again on the next request.
  const load = () =>
    (board ??= boardRouter(s).catch((err: unknown) => {
      board = undefined;
      throw err;
    }));
  r.use(async (req, res, next) => (await load())(req, res, next));
  return r;
}
