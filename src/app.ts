import express, { Router } from 'express';
import { accountRouter } from './auth/routes.ts';
import { authenticate } from './auth/middleware.ts';
import { customersRouter } from './customers/routes.ts';
import { idempotency } from './idempotency/middleware.ts';
import { errorHandler, jsonBody, notFound, requestContext } from './lib/http.ts';
import { healthRouter } from './ops/health.ts';
import type { Services } from './services.ts';

/** The web process: the /v1 API, the hosted pages and the operational probes. */
export function createApp(s: Services): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', 'loopback');
  app.use(requestContext(s.log));
  app.use(healthRouter(s));

  const v1 = Router();
  v1.use(authenticate(s.sql, s.config.apiKeyCacheMs));
  v1.use(jsonBody);
  v1.use(idempotency(s.sql));
  v1.use('/account', accountRouter());
  v1.use('/customers', customersRouter(s.sql));
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
