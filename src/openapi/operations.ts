import { z } from 'zod';
import { AuditEventObject } from '../audit/presenter.ts';
import { ListAuditEvents } from '../audit/schema.ts';
import { AccountObject, ApiKeyObject, NewApiKeyObject } from '../auth/presenter.ts';
import { CreateApiKey, ListApiKeys, RevokeApiKey, RollApiKey, UpdateAccount } from '../auth/schema.ts';
import { CheckoutSessionObject } from '../checkout/presenter.ts';
import { DisputeObject } from '../disputes/presenter.ts';
import { EmailObject } from '../email/presenter.ts';
import { ListEmails } from '../email/schema.ts';
import { EventTypeListObject } from '../events/catalogue.ts';
import { ListEvents } from '../events/schema.ts';
import { deletedObject, listOf } from '../lib/objects.ts';
import { SendTestEvent } from '../test-events/schema.ts';
import { AdvanceTime, DisputePayment, ExpireSessionNow, PaySession } from '../test-helpers/schema.ts';
import { WebhookDeliveryObject, WebhookEndpointObject, WebhookEndpointStatsObject, WebhookEndpointWithSecretObject } from '../webhooks/presenter.ts';
import { CreateEndpoint, ListDeliveries, ListEndpointDeliveries, ListEndpoints, ResendEvent, RetryFailed, RotateSecret, UpdateEndpoint } from '../webhooks/schema.ts';
import { EventObject } from './events.ts';
import { TestPaymentObject, TimeAdvanceObject } from './test-helpers.ts';
import { BILLING_OPERATIONS } from './billing-operations.ts';
import { PAYMENT_OPERATIONS } from './payment-operations.ts';
import { SEARCH_OPERATIONS } from './search-operations.ts';
import { FRAUD_OPERATIONS } from './fraud-operations.ts';
import { EXPORT_OPERATIONS } from './export-operations.ts';
import { ReportSummaryObject } from '../reports/presenter.ts';
import { ReportQuery } from '../reports/schema.ts';
import type { Operation } from './operation.ts';

/** The answer of retry-failed and resend: the new deliveries. */
const DeliveryListObject = listOf(WebhookDeliveryObject, 'A page of `webhook_delivery` objects, newest first.');

const TEST_HELPER_ERRORS = [403];

/** Every operation of the API: src/app.ts mounts exactly these (test/openapi/routes.test.ts). */
export const OPERATIONS: readonly Operation[] = [
  // Account
  { method: 'get', path: '/v1/account', operationId: 'retrieveAccount', tag: 'Account', summary: 'Retrieve the account', response: AccountObject },
  {
    method: 'post',
    path: '/v1/account',
    operationId: 'updateAccountPost',
    tag: 'Account',
    summary: 'Update the account (POST)',
    description: 'The same as `PATCH /v1/account`, for clients that only POST. Each field sent is set; `null` clears it. Live keys only: a test key is refused with 403.',
    body: UpdateAccount,
    response: AccountObject,
    errors: [403],
  },
  {
    method: 'patch',
    path: '/v1/account',
    operationId: 'updateAccount',
    tag: 'Account',
    summary: 'Update the account',
    description:
      'Sets the fields sent (`null` clears one). Branding is shared by test and live mode and is what live customers see (the hosted pages, the Reply-To of emails), so it needs a live key: a test key is refused with `403 permission_error` (`forbidden`), whatever it sends.',
    body: UpdateAccount,
    response: AccountObject,
    errors: [403],
  },

  // API keys
  { method: 'get', path: '/v1/api-keys', operationId: 'listApiKeys', tag: 'API keys', summary: 'List API keys', query: ListApiKeys, response: listOf(ApiKeyObject) },
  {
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'createApiKey',
    tag: 'API keys',
    summary: 'Create an API key',
    description: 'A new key of the same account and mode; its `secret` is shown in this answer only.',
    body: CreateApiKey,
    response: NewApiKeyObject,
    idempotency: false,
  },
  { method: 'get', path: '/v1/api-keys/{id}', operationId: 'retrieveApiKey', tag: 'API keys', summary: 'Retrieve an API key', id: ['key', 'API key'], response: ApiKeyObject },
  {
    method: 'post',
    path: '/v1/api-keys/{id}/roll',
    operationId: 'rollApiKey',
    tag: 'API keys',
    summary: 'Roll an API key',
    description: 'A new key replaces this one, which keeps working for `expires_in` seconds (0: it ends now; at most 7 days). A key cannot roll itself without an overlap.',
    id: ['key', 'API key'],
    body: RollApiKey,
    response: NewApiKeyObject,
    idempotency: false,
  },
  {
    method: 'post',
    path: '/v1/api-keys/{id}/revoke',
    operationId: 'revokeApiKey',
    tag: 'API keys',
    summary: 'Revoke an API key',
    description: 'The key is refused everywhere within `API_KEY_CACHE_SECONDS` (2 s). A key cannot revoke itself.',
    id: ['key', 'API key'],
    body: RevokeApiKey,
    response: ApiKeyObject,
    idempotency: false,
  },

  ...PAYMENT_OPERATIONS,
  ...BILLING_OPERATIONS,
  ...SEARCH_OPERATIONS,
  ...EXPORT_OPERATIONS,
  {
    method: 'get',
    path: '/v1/reports/summary',
    operationId: 'retrieveReportSummary',
    tag: 'Reports',
    summary: 'Summarise volume, refunds and disputes',
    description:
      'Gross volume, refunds, disputes, net and counts of the key\'s account and mode per day, week (Monday to Sunday) or month, in UTC, each currency on its own, with the success rate and the top decline reasons. Read from rollups kept in the transaction of each payment, refund and dispute (docs/reports.md), so the answer is immediate whatever the number of payments. A range has at most 400 periods; `from` after `to`, or a longer range, answers 400 naming `from`.',
    query: ReportQuery,
    response: ReportSummaryObject,
  },
  ...FRAUD_OPERATIONS,

  // Audit log (issue 25)
  {
    method: 'get',
    path: '/v1/audit-events',
    operationId: 'listAuditEvents',
    tag: 'Audit log',
    summary: 'List audit events',
    description:
      'Security-relevant changes (sign-ins, team, API keys, webhook endpoints, refunds, disputes, settings) made through the dashboard or the API, newest first: of the key’s mode and account-wide. Kept at least a year; never edited or deleted.',
    query: ListAuditEvents,
    response: listOf(AuditEventObject),
  },

  // Emails
  { method: 'get', path: '/v1/emails', operationId: 'listEmails', tag: 'Emails', summary: 'List emails', query: ListEmails, response: listOf(EmailObject) },
  { method: 'get', path: '/v1/emails/{id}', operationId: 'retrieveEmail', tag: 'Emails', summary: 'Retrieve an email', id: ['em', 'email'], response: EmailObject },

  // Webhook endpoints
  {
    method: 'post',
    path: '/v1/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    tag: 'Webhook endpoints',
    summary: 'Create a webhook endpoint',
    description: 'The answer carries `signing_secret`, shown this once. An account has at most 16 endpoints per mode.',
    body: CreateEndpoint,
    response: WebhookEndpointWithSecretObject,
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    tag: 'Webhook endpoints',
    summary: 'List webhook endpoints',
    query: ListEndpoints,
    response: listOf(WebhookEndpointObject),
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints/{id}',
    operationId: 'retrieveWebhookEndpoint',
    tag: 'Webhook endpoints',
    summary: 'Retrieve a webhook endpoint',
    id: ['we', 'webhook endpoint'],
    response: WebhookEndpointObject,
  },
  {
    method: 'patch',
    path: '/v1/webhook-endpoints/{id}',
    operationId: 'updateWebhookEndpoint',
    tag: 'Webhook endpoints',
    summary: 'Update a webhook endpoint',
    description: '`is_active: false` pauses its deliveries; `true` sends the paused ones at once.',
    id: ['we', 'webhook endpoint'],
    body: UpdateEndpoint,
    response: WebhookEndpointObject,
  },
  {
    method: 'delete',
    path: '/v1/webhook-endpoints/{id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'Webhook endpoints',
    summary: 'Delete a webhook endpoint',
    description: 'Its pending deliveries are cancelled.',
    id: ['we', 'webhook endpoint'],
    response: deletedObject('webhook_endpoint', 'we'),
  },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    tag: 'Webhook endpoints',
    summary: "Rotate a webhook endpoint's secret",
    description: 'A new `signing_secret`, shown this once; the old one keeps signing beside it for 24 hours.',
    id: ['we', 'webhook endpoint'],
    body: RotateSecret,
    response: WebhookEndpointWithSecretObject,
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints/{id}/deliveries',
    operationId: 'listWebhookEndpointDeliveries',
    tag: 'Webhook endpoints',
    summary: "List a webhook endpoint's deliveries",
    description: 'Newest first, each with its attempts.',
    id: ['we', 'webhook endpoint'],
    query: ListEndpointDeliveries,
    response: DeliveryListObject,
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints/{id}/stats',
    operationId: 'retrieveWebhookEndpointStats',
    tag: 'Webhook endpoints',
    summary: "Retrieve an endpoint's delivery analytics",
    description:
      'Attempts, success rate and latency (p50, p95) of the deliveries to this endpoint over the last 24 hours and 30 days, and the last 24 hours hour by hour. Kept per hour as attempts are recorded; read in one indexed query.',
    id: ['we', 'webhook endpoint'],
    response: WebhookEndpointStatsObject,
  },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/retry-failed',
    operationId: 'retryFailedWebhookDeliveries',
    tag: 'Webhook endpoints',
    summary: 'Retry failed deliveries',
    description:
      'Sends again, as new deliveries and once, each event whose latest delivery to this endpoint FAILED and was made at or after `since`. At most 1,000 per call: `has_more` says when to call again.',
    id: ['we', 'webhook endpoint'],
    body: RetryFailed,
    response: DeliveryListObject,
  },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/test',
    operationId: 'sendTestWebhookEvent',
    tag: 'Webhook endpoints',
    summary: 'Send a test event',
    description:
      'A signed sample event of `type` to this endpoint only: a complete object of the type\'s resource whose ids have zeros for their time part. It is not listed by `GET /v1/events` (it can be read by its id).',
    id: ['we', 'webhook endpoint'],
    body: SendTestEvent,
    response: WebhookDeliveryObject,
  },

  // Events
  { method: 'get', path: '/v1/events', operationId: 'listEvents', tag: 'Events', summary: 'List events', query: ListEvents, response: listOf(EventObject) },
  { method: 'get', path: '/v1/events/{id}', operationId: 'retrieveEvent', tag: 'Events', summary: 'Retrieve an event', id: ['evt', 'event'], response: EventObject },
  {
    method: 'get',
    path: '/v1/events/{id}/deliveries',
    operationId: 'listEventDeliveries',
    tag: 'Events',
    summary: "List an event's deliveries",
    description: 'Newest first, each with its attempts.',
    id: ['evt', 'event'],
    query: ListDeliveries,
    response: DeliveryListObject,
  },
  {
    method: 'post',
    path: '/v1/events/{id}/resend',
    operationId: 'resendEvent',
    tag: 'Events',
    summary: 'Resend an event',
    description: 'New deliveries (a fresh schedule of 7 attempts) to every endpoint subscribed to its type now, or to `endpoint_id` only (subscribed or not).',
    id: ['evt', 'event'],
    body: ResendEvent,
    response: DeliveryListObject,
  },
  { method: 'get', path: '/v1/event-types', operationId: 'listEventTypes', tag: 'Events', summary: 'List event types', response: EventTypeListObject },

  // Test helpers
  {
    method: 'post',
    path: '/v1/test-helpers/checkout/sessions/{id}/pay',
    operationId: 'testHelpersPayCheckoutSession',
    tag: 'Test helpers',
    summary: 'Pay a checkout session',
    description: 'Pays an OPEN session as the hosted page would, with a test `card` or a named `scenario` (exactly one of them).',
    id: ['cs', 'checkout session'],
    body: PaySession,
    response: TestPaymentObject,
    errors: [...TEST_HELPER_ERRORS, 409],
  },
  {
    method: 'post',
    path: '/v1/test-helpers/checkout/sessions/{id}/expire',
    operationId: 'testHelpersExpireCheckoutSession',
    tag: 'Test helpers',
    summary: 'Expire a checkout session as time would',
    id: ['cs', 'checkout session'],
    body: ExpireSessionNow,
    response: CheckoutSessionObject,
    errors: TEST_HELPER_ERRORS,
  },
  {
    method: 'post',
    path: '/v1/test-helpers/advance-time',
    operationId: 'testHelpersAdvanceTime',
    tag: 'Test helpers',
    summary: 'Advance time',
    description: 'Runs now the time-based work of the test mode due within `seconds`: session expiries, invoice reminders, and installment parts and their retries (charged on the saved card).',
    body: AdvanceTime,
    response: TimeAdvanceObject,
    errors: TEST_HELPER_ERRORS,
  },
  {
    method: 'post',
    path: '/v1/test-helpers/payments/{id}/dispute',
    operationId: 'testHelpersDisputePayment',
    tag: 'Test helpers',
    summary: 'Dispute a payment',
    description: 'The cardholder disputes a SUCCEEDED payment: the dispute is recorded as a processor dispute would be (`dispute.created`).',
    id: ['pay', 'payment'],
    body: DisputePayment,
    response: DisputeObject,
    errors: TEST_HELPER_ERRORS,
  },

  // The document itself
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'retrieveOpenApiDocument',
    tag: 'Reference',
    summary: 'Retrieve this document',
    description: 'The OpenAPI 3.1 document of this API, made from the schemas the service validates and presents with. No key needed.',
    response: z.object({ openapi: z.string() }).catchall(z.unknown()).meta({ id: 'openapi_document', description: 'An OpenAPI 3.1 document.' }),
    auth: false,
  },
];
