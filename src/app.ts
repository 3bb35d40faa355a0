import express, { Router } from 'express';
import { auditEventsRouter } from './audit/routes.ts';
import { ADMIN_QUEUES_PATH, adminQueuesRouter } from './admin/board.ts';
import { accountRouter, apiKeysRouter } from './auth/routes.ts';
import { authenticate } from './auth/middleware.ts';
import { checkoutMountPath, checkoutPagesRouter } from './checkout/pages.ts';
import { checkoutSessionsRouter } from './checkout/routes.ts';
import { customersRouter } from './customers/routes.ts';
import { DASHBOARD_PATH, dashboardRouter } from './dashboard/pages.ts';
import { disputesRouter } from './disputes/routes.ts';
import { eventsRouter, eventTypesRouter } from './events/routes.ts';
import { idempotency } from './idempotency/middleware.ts';
import { errorHandler, jsonBody, leanJson, notFound, requestContext } from './lib/http.ts';
import { httpMetrics } from './metrics/http.ts';
import { routeTable, type Mount } from './lib/route-table.ts';
import { METRICS_PATH, metricsHandler } from './metrics/routes.ts';
import { eventPayloadSchema } from './openapi/events.ts';
import { docsRouter, openapiRouter } from './openapi/routes.ts';
import { healthRouter } from './ops/health.ts';
import { paymentLinkMountPath, paymentLinkPagesRouter } from './payment-links/pages.ts';
import { paymentLinksRouter } from './payment-links/routes.ts';
import { paymentsRouter } from './payments/routes.ts';
import { PORTAL_PATH, portalRouter } from './portal/pages.ts';
import { portalSessionsRouter } from './portal/routes.ts';
import { stripeWebhookRouter } from './processor-events/routes.ts';
import { refundsRouter } from './refunds/routes.ts';
import { emailsRouter } from './email/routes.ts';
import { invoiceMountPath, invoicePagesRouter } from './invoices/pages.ts';
import { invoicesRouter } from './invoices/routes.ts';
import { installmentPlansRouter } from './installments/routes.ts';
import { searchRouter } from './search/routes.ts';
import { fraudRouter } from './fraud/routes.ts';
import { exportFilesRouter, exportsRouter } from './exports/routes.ts';
import { EXPORT_FILES_PATH } from './exports/link.ts';
import { reportsRouter } from './reports/routes.ts';
import type { Services } from './services.ts';
import { testEventsRouter } from './test-events/routes.ts';
import { testHelpersRouter } from './test-helpers/routes.ts';
import { eventDeliveriesRouter, webhookEndpointsRouter } from './webhooks/routes.ts';

/** A router of the /v1 API and where it is mounted. */
export interface ApiRouter {
  path: string;
  router: Router;
  /** `public`: before the key check; `before-idempotency`: after it, before the Idempotency-Key layer; `api`: after both. */
  stage: 'public' | 'before-idempotency' | 'api';
}

/**
 * Every router of /v1, in mount order: the API is these routes and nothing else. The OpenAPI
 * document (src/openapi/operations.ts) lists the same routes, checked both ways by
 * test/openapi/routes.test.ts.
 */
export function apiRouters(s: Services): ApiRouter[] {
  return [
    { path: '/', router: openapiRouter(s), stage: 'public' }, // GET /v1/openapi.json: no key needed
    { path: '/api-keys', router: apiKeysRouter(s), stage: 'before-idempotency' }, // its stored answers would hold the secret
    { path: '/customers', router: portalSessionsRouter(s), stage: 'before-idempotency' }, // /:id/portal-sessions: its answer is a one-time sign-in link
    { path: '/account', router: accountRouter(s), stage: 'api' },
    { path: '/customers', router: customersRouter(s), stage: 'api' },
    { path: '/payment-links', router: paymentLinksRouter(s), stage: 'api' },
    { path: '/checkout/sessions', router: checkoutSessionsRouter(s), stage: 'api' },
    { path: '/payments', router: paymentsRouter(s), stage: 'api' },
    { path: '/disputes', router: disputesRouter(s), stage: 'api' },
    { path: '/refunds', router: refundsRouter(s), stage: 'api' },
    { path: '/invoices', router: invoicesRouter(s), stage: 'api' },
    { path: '/installment-plans', router: installmentPlansRouter(s), stage: 'api' },
    { path: '/search', router: searchRouter(s), stage: 'api' },
    { path: '/fraud', router: fraudRouter(s), stage: 'api' },
    { path: '/exports', router: exportsRouter(s), stage: 'api' },
    { path: '/reports', router: reportsRouter(s), stage: 'api' }, // read only, from the rollups (src/reports)
    { path: '/emails', router: emailsRouter(s), stage: 'api' },
    { path: '/webhook-endpoints', router: webhookEndpointsRouter(s), stage: 'api' },
    { path: '/webhook-endpoints', router: testEventsRouter(s), stage: 'api' }, // /:id/test: the sample objects are the test-events component's
    { path: '/events', router: eventsRouter(s), stage: 'api' },
    { path: '/events', router: eventDeliveriesRouter(s), stage: 'api' }, // /:id/deliveries and /:id/resend: the webhooks component's
    { path: '/event-types', router: eventTypesRouter(eventPayloadSchema), stage: 'api' },
    { path: '/audit-events', router: auditEventsRouter(s), stage: 'api' }, // read only: the log is never edited
    { path: '/test-helpers', router: testHelpersRouter(s), stage: 'api' }, // test keys only: pay, expire, advance time, dispute (src/test-helpers)
  ];
}

/** /v1: the public routes, the key check, JSON bodies, the Idempotency-Key layer and the API's routers, in that order. */
function v1Router(s: Services): Router {
  const v1 = Router();
  const mounts = apiRouters(s);
  const mount = (stage: ApiRouter['stage']) => {
    for (const m of mounts) if (m.stage === stage) v1.use(m.path, m.router);
  };
  mount('public');
  v1.use(authenticate(s.sql, s.config.apiKeyCacheMs, s.log));
  v1.use(jsonBody);
  mount('before-idempotency');
  v1.use(idempotency(s.sql));
  mount('api');
  return v1;
}

/**
 * A hosted-page router (checkout, link, invoice) at the path of its public URL ('' for the root).
 * Below the root its routes are flattened into the route table (issue 28: one router less per page);
 * its error handler, the router's last layer, then follows only its own routes, whose prefix no
 * other mount shares. At the root it stays whole: flattened there, its error handler would follow
 * every mount before it.
 */
const pages = (path: string, router: Router): Mount => (path === '' ? { path: '/', router } : { path, router, flatten: true });

/** The web process: the /v1 API, the hosted pages and the operational probes. */
export function createApp(s: Services): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  leanJson(app); // res.json in one write, the same bytes (src/lib/http.ts)
  // The client address of the hosted pages' rate limits: forwarded headers only from TRUST_PROXY.
  app.set('trust proxy', s.config.trustProxy);
  const http = httpMetrics(s.metrics);
  app.use(requestContext(s.log, http.observe));
  // Every router of the app in mount order, as one table (src/lib/route-table.ts): a request walks only
  // the layers its first two path segments can reach; the API's routers and the probes' are flattened.
  const mounts: Mount[] = [{ path: '/', router: healthRouter(s), flatten: true }];
  // METRICS_TOKEN without METRICS_PORT: /metrics here, behind the token (src/metrics/routes.ts); else not at all.
  const { token, port: metricsPort } = s.config.metrics;
  if (token && metricsPort === null) mounts.push({ path: '/', router: Router().get(METRICS_PATH, metricsHandler(s, token)), flatten: true });
  // Stripe's events: the raw body (its signature covers the bytes), before any body parser.
  mounts.push({ path: '/', router: stripeWebhookRouter(s), flatten: true });
  const board = adminQueuesRouter(s); // null unless ADMIN_USER and ADMIN_PASSWORD are set
  if (board) mounts.push({ path: ADMIN_QUEUES_PATH, router: board });
  mounts.push(
    { path: '/', router: docsRouter(), flatten: true }, // /docs: the API reference (Redoc, from /v1/openapi.json), before pages mounted at /
    { path: PORTAL_PATH, router: portalRouter(s) }, // the customer portal (src/portal): magic-link sign-in, a customer's own records
    // Hosted checkout pages (HTML, helmet, urlencoded forms) before the JSON API.
    pages(checkoutMountPath(s.config.checkoutUrl), checkoutPagesRouter(s)),
    pages(paymentLinkMountPath(s.config.publicLinkUrl), paymentLinkPagesRouter(s)),
    pages(invoiceMountPath(s.config.invoiceUrl), invoicePagesRouter(s)),
    { path: EXPORT_FILES_PATH, router: exportFilesRouter(s) }, // export runs' files, behind a signed link that expires (src/exports)
    { path: DASHBOARD_PATH, router: dashboardRouter(s) }, // the merchant dashboard (src/dashboard): HTML, sessions, forms
    { path: '/v1', router: v1Router(s), flatten: true },
  );
  app.use(routeTable(mounts));

  app.use(notFound);
  app.use(errorHandler);
  // The route templates of http_request_duration_seconds, read once every route is mounted.
  http.indexRoutes(app.router as never);
  return app;
}
