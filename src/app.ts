import express, { Router } from 'express';
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
import { errorHandler, jsonBody, notFound, requestContext } from './lib/http.ts';
import { healthRouter } from './ops/health.ts';
import { paymentLinkMountPath, paymentLinkPagesRouter } from './payment-links/pages.ts';
import { paymentLinksRouter } from './payment-links/routes.ts';
import { paymentsRouter } from './payments/routes.ts';
import { stripeWebhookRouter } from './processor-events/routes.ts';
import { refundsRouter } from './refunds/routes.ts';
import { emailsRouter } from './email/routes.ts';
import { invoiceMountPath, invoicePagesRouter } from './invoices/pages.ts';
import { invoicesRouter } from './invoices/routes.ts';
import type { Services } from './services.ts';
import { testEventsRouter } from './test-events/routes.ts';
import { eventDeliveriesRouter, webhookEndpointsRouter } from './webhooks/routes.ts';

/** The web process: the /v1 API, the hosted pages and the operational probes. */
export function createApp(s: Services): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The client address of the hosted pages' rate limits: forwarded headers only from TRUST_PROXY.
  app.set('trust proxy', s.config.trustProxy);
  app.use(requestContext(s.log));
  app.use(healthRouter(s));
  // Stripe's events: the raw body (its signature covers the bytes), before any body parser.
  app.use(stripeWebhookRouter(s));
  const board = adminQueuesRouter(s); // null unless ADMIN_USER and ADMIN_PASSWORD are set
  if (board) app.use(ADMIN_QUEUES_PATH, board);
  // Hosted checkout pages (HTML, helmet, urlencoded forms) before the JSON API.
  app.use(checkoutMountPath(s.config.checkoutUrl) || '/', checkoutPagesRouter(s));
  app.use(paymentLinkMountPath(s.config.publicLinkUrl) || '/', paymentLinkPagesRouter(s));
  app.use(invoiceMountPath(s.config.invoiceUrl) || '/', invoicePagesRouter(s));
  app.use(DASHBOARD_PATH, dashboardRouter(s)); // the merchant dashboard (src/dashboard): HTML, sessions, forms

  const v1 = Router();
  v1.use(authenticate(s.sql, s.config.apiKeyCacheMs, s.log));
  v1.use(jsonBody);
  v1.use('/api-keys', apiKeysRouter(s)); // before idempotency: its stored answers would hold the secret
  v1.use(idempotency(s.sql));
  v1.use('/account', accountRouter(s));
  v1.use('/customers', customersRouter(s));
  v1.use('/payment-links', paymentLinksRouter(s));
  v1.use('/checkout/sessions', checkoutSessionsRouter(s));
  v1.use('/payments', paymentsRouter(s));
  v1.use('/disputes', disputesRouter(s));
  v1.use('/refunds', refundsRouter(s));
  v1.use('/invoices', invoicesRouter(s));
  v1.use('/emails', emailsRouter(s));
  v1.use('/webhook-endpoints', webhookEndpointsRouter(s));
  v1.use('/webhook-endpoints', testEventsRouter(s)); // /:id/test: the sample objects are the test-events component's
  v1.use('/events', eventsRouter(s));
  v1.use('/events', eventDeliveriesRouter(s)); // /:id/deliveries and /:id/resend: the webhooks component's
  v1.use('/event-types', eventTypesRouter());
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
