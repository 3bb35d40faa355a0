import { timingSafeEqual, createHash } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type RequestHandler } from 'express';
import { ApiError } from '../lib/errors.ts';
import type { Services } from '../services.ts';

export const ADMIN_QUEUES_PATH = '/admin/queues';

// Hashing both sides first gives equal lengths, so the comparison takes the same time for any guess.
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

function basicAuth(user: string, password: string): RequestHandler {
  return (req, res, next) => {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? '');
    const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
    const i = decoded.indexOf(':');
    // Both halves are always compared, so the answer's timing does not tell which one was wrong.
    const userOk = same(decoded.slice(0, i), user);
    const passwordOk = same(decoded.slice(i + 1), password);
    const ok = i >= 0 && userOk && passwordOk;
    if (ok) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="Bull Board", charset="UTF-8"');
    next(new ApiError(m ? 'api_key_invalid' : 'api_key_missing', 'Bull Board needs the admin user name and password (HTTP basic auth).'));
  };
}

/**
 * Bull Board over every queue of the service (inspect, retry failed jobs), behind HTTP basic auth
 * from ADMIN_USER / ADMIN_PASSWORD. Without both, null: the board is not mounted at all.
 */
export function adminQueuesRouter(s: Services): Router | null {
  if (!s.config.admin) return null;
  const adapter = new ExpressAdapter();
  adapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({ queues: s.queues.all().map((q) => new BullMQAdapter(q)), serverAdapter: adapter as never }); // @bull-board/express pins its own copy of @bull-board/api's types
  const r = Router();
  r.use(basicAuth(s.config.admin.user, s.config.admin.password));
  r.use(adapter.getRouter() as Router);
  return r;
}
