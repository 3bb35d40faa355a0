import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
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
  r.use(boardGuard(s.config.admin.user, s.config.admin.password));
  r.use(adapter.getRouter() as Router);
  return r;
}
