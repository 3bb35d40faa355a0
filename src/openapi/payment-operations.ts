import { CheckoutSessionObject } from '../checkout/presenter.ts';
import { CreateSession, ExpireSession, ListSessions } from '../checkout/schema.ts';
import { CustomerObject } from '../customers/presenter.ts';
import { CreateCustomer, ListCustomers, UpdateCustomer } from '../customers/schema.ts';
import { DisputeObject } from '../disputes/presenter.ts';
import { CloseDispute, ListDisputes, UpdateDispute } from '../disputes/schema.ts';
import { deletedObject, listOf } from '../lib/objects.ts';
import { PaymentLinkAnalyticsObject, PaymentLinkObject } from '../payment-links/presenter.ts';
import { CreatePaymentLink, ListPaymentLinks, UpdatePaymentLink } from '../payment-links/schema.ts';
import { PaymentObject } from '../payments/presenter.ts';
import { ListPayments } from '../payments/schema.ts';
import { PortalSessionObject } from '../portal/presenter.ts';
import { CreatePortalSession } from '../portal/schema.ts';
import { RefundObject } from '../refunds/presenter.ts';
import { CancelRefund, CreateRefund, ListRefunds } from '../refunds/schema.ts';
import type { Operation } from './operation.ts';

/** The operations of customers, payment links, checkout sessions, payments, refunds and disputes, in the order of the document. */
export const PAYMENT_OPERATIONS: readonly Operation[] = [
  // Customers
  { method: 'post', path: '/v1/customers', operationId: 'createCustomer', tag: 'Customers', summary: 'Create a customer', body: CreateCustomer, response: CustomerObject },
  {
    method: 'get',
    path: '/v1/customers',
    operationId: 'listCustomers',
    tag: 'Customers',
    summary: 'List customers',
    query: ListCustomers,
    response: listOf(CustomerObject),
  },
  { method: 'get', path: '/v1/customers/{id}', operationId: 'retrieveCustomer', tag: 'Customers', summary: 'Retrieve a customer', id: ['cus', 'customer'], response: CustomerObject },
  {
    method: 'patch',
    path: '/v1/customers/{id}',
    operationId: 'updateCustomer',
    tag: 'Customers',
    summary: 'Update a customer',
    description: 'Changes only the fields sent; `null` clears a nullable field; `metadata` keys are merged.',
    id: ['cus', 'customer'],
    body: UpdateCustomer,
    response: CustomerObject,
  },
  {
    method: 'delete',
    path: '/v1/customers/{id}',
    operationId: 'deleteCustomer',
    tag: 'Customers',
    summary: 'Delete a customer',
    description: 'Permanently deletes the customer.',
    id: ['cus', 'customer'],
    response: deletedObject('customer', 'cus'),
  },
  {
    method: 'post',
    path: '/v1/customers/{id}/portal-sessions',
    operationId: 'createCustomerPortalSession',
    tag: 'Customers',
    summary: 'Create a customer portal link',
    description:
      "A one-time link (15 minutes) that signs the customer in to the customer portal, where they see their own payments, receipts, invoices and installment plans with you, pay an open invoice and replace the card of an active plan. `Idempotency-Key` is refused: the answer holds a live sign-in link, which is never stored; a retry makes another link, and an unused one expires by itself.",
    id: ['cus', 'customer'],
    body: CreatePortalSession,
    response: PortalSessionObject,
    idempotency: false,
  },

  // Payment links
  {
    method: 'post',
    path: '/v1/payment-links',
    operationId: 'createPaymentLink',
    tag: 'Payment links',
    summary: 'Create a payment link',
    description: 'The request field is `amount`; the object carries it as `amount_cents`.',
    body: CreatePaymentLink,
    response: PaymentLinkObject,
  },
  {
    method: 'get',
    path: '/v1/payment-links',
    operationId: 'listPaymentLinks',
    tag: 'Payment links',
    summary: 'List payment links',
    query: ListPaymentLinks,
    response: listOf(PaymentLinkObject),
  },
  {
    method: 'get',
    path: '/v1/payment-links/{id}',
    operationId: 'retrievePaymentLink',
    tag: 'Payment links',
    summary: 'Retrieve a payment link',
    id: ['pl', 'payment link'],
    response: PaymentLinkObject,
  },
  {
    method: 'patch',
    path: '/v1/payment-links/{id}',
    operationId: 'updatePaymentLink',
    tag: 'Payment links',
    summary: 'Update a payment link',
    description: 'Changes only the fields sent. `status` moves a link between ACTIVE and CANCELLED; amount, currency and type are fixed once the link was paid.',
    id: ['pl', 'payment link'],
    body: UpdatePaymentLink,
    response: PaymentLinkObject,
  },
  {
    method: 'get',
    path: '/v1/payment-links/{id}/analytics',
    operationId: 'retrievePaymentLinkAnalytics',
    tag: 'Payment links',
    summary: "Retrieve a payment link's analytics",
    id: ['pl', 'payment link'],
    response: PaymentLinkAnalyticsObject,
  },

  // Checkout sessions
  {
    method: 'post',
    path: '/v1/checkout/sessions',
    operationId: 'createCheckoutSession',
    tag: 'Checkout sessions',
    summary: 'Create a checkout session',
    description:
      'Send the payer to the returned `url`. Give `amount`, or `line_items` whose total is the amount (or both, agreeing). The session is OPEN and `unpaid`, and expires 24 hours later unless `expires_at` says otherwise.',
    body: CreateSession,
    response: CheckoutSessionObject,
  },
  {
    method: 'get',
    path: '/v1/checkout/sessions',
    operationId: 'listCheckoutSessions',
    tag: 'Checkout sessions',
    summary: 'List checkout sessions',
    query: ListSessions,
    response: listOf(CheckoutSessionObject),
  },
  {
    method: 'get',
    path: '/v1/checkout/sessions/{id}',
    operationId: 'retrieveCheckoutSession',
    tag: 'Checkout sessions',
    summary: 'Retrieve a checkout session',
    id: ['cs', 'checkout session'],
    response: CheckoutSessionObject,
  },
  {
    method: 'post',
    path: '/v1/checkout/sessions/{id}/expire',
    operationId: 'expireCheckoutSession',
    tag: 'Checkout sessions',
    summary: 'Expire a checkout session',
    description: 'Moves an OPEN session to EXPIRED at once (`checkout.session.expired`). Refused while a payment on it is in progress.',
    id: ['cs', 'checkout session'],
    body: ExpireSession,
    response: CheckoutSessionObject,
  },

  // Payments
  { method: 'get', path: '/v1/payments', operationId: 'listPayments', tag: 'Payments', summary: 'List payments', query: ListPayments, response: listOf(PaymentObject) },
  { method: 'get', path: '/v1/payments/{id}', operationId: 'retrievePayment', tag: 'Payments', summary: 'Retrieve a payment', id: ['pay', 'payment'], response: PaymentObject },

  // Refunds
  {
    method: 'post',
    path: '/v1/refunds',
    operationId: 'createRefund',
    tag: 'Refunds',
    summary: 'Create a refund',
    description: 'Without `amount`, whatever is left to refund. The refund is PENDING until the processor settles it (`refund.updated`).',
    body: CreateRefund,
    response: RefundObject,
  },
  { method: 'get', path: '/v1/refunds', operationId: 'listRefunds', tag: 'Refunds', summary: 'List refunds', query: ListRefunds, response: listOf(RefundObject) },
  { method: 'get', path: '/v1/refunds/{id}', operationId: 'retrieveRefund', tag: 'Refunds', summary: 'Retrieve a refund', id: ['re', 'refund'], response: RefundObject },
  {
    method: 'post',
    path: '/v1/refunds/{id}/cancel',
    operationId: 'cancelRefund',
    tag: 'Refunds',
    summary: 'Cancel a refund',
    description: 'Only while it is PENDING.',
    id: ['re', 'refund'],
    body: CancelRefund,
    response: RefundObject,
  },

  // Disputes
  { method: 'get', path: '/v1/disputes', operationId: 'listDisputes', tag: 'Disputes', summary: 'List disputes', query: ListDisputes, response: listOf(DisputeObject) },
  { method: 'get', path: '/v1/disputes/{id}', operationId: 'retrieveDispute', tag: 'Disputes', summary: 'Retrieve a dispute', id: ['dp', 'dispute'], response: DisputeObject },
  {
    method: 'patch',
    path: '/v1/disputes/{id}',
    operationId: 'updateDispute',
    tag: 'Disputes',
    summary: 'Update a dispute',
    description: 'Saves evidence, merged field by field (`null` or `""` clears one), and with `submit: true` sends it for a decision (UNDER_REVIEW). Only while NEEDS_RESPONSE.',
    id: ['dp', 'dispute'],
    body: UpdateDispute,
    response: DisputeObject,
  },
  {
    method: 'post',
    path: '/v1/disputes/{id}/close',
    operationId: 'closeDispute',
    tag: 'Disputes',
    summary: 'Close a dispute',
    description: 'Accepts the loss: the dispute is LOST at once. Only while NEEDS_RESPONSE.',
    id: ['dp', 'dispute'],
    body: CloseDispute,
    response: DisputeObject,
  },
];
