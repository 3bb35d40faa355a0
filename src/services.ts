import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { connect, ensureDatabase, type Sql } from './db/sql.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { connectRedis } from './queue/redis.ts';
import { Queues } from './queue/queues.ts';
import { createSimulator } from './processor/simulator.ts';
import { createStripeProcessor } from './processor/stripe.ts';
import type { Processor } from './processor/types.ts';
import type { PaymentParticipant } from './checkout/participants.ts';
import { linkPaymentParticipant } from './payment-links/participant.ts';
import { disputePaymentParticipant } from './disputes/participant.ts';
import { invoicePaymentParticipant } from './invoices/participant.ts';
import { receiptParticipant } from './checkout/receipt.ts';
import { installmentParticipant } from './installments/participant.ts';
import { createMailer, type Mailer } from './email/transport.ts';

/** What every part of the service is handed: built once here (the composition root), passed explicitly. */
export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  redis: Redis;
  queues: Queues;
  /**
   * The card processor of each mode (read through processorFor, src/processor/select.ts): test is
   * the simulator unless STRIPE_TEST_* are set; live is Stripe with STRIPE_* and null without them
   * (live payments off: live mode never simulates).
   */
  processors: { test: Processor; live: Processor | null };
  /**
   * The components that take part in every checkout payment, in order (checkout/participants.ts):
   * read by the hosted page and by the sweeper alike, so no router has to be mounted for them to run.
   */
  paymentParticipants: readonly PaymentParticipant[];
  /** How emails leave: SMTP_URL, or the log when it is unset (src/email/transport.ts). */
  mailer: Mailer;
  /** Run first by closeServices, while Redis and Postgres are still open (flushing buffers). */
  beforeClose: Array<() => Promise<void>>;
}

export async function createServices(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Services> {
  await ensureDatabase(config.databaseUrl);
  const redis = await connectRedis(config.redisUrl);
  const sql = connect(config.databaseUrl, config.dbPoolMax, config.dbTimeouts);
  const queues = new Queues(redis, config.redisPrefix);
  await queues.openAll();
  // Every payment participant is listed here, and only here: payment links hold quantity_limit;
  // invoices hold their amount due; disputes ask the processor about each new payment soon after
  // it succeeds; receipts queue the payer's email (last: it reads what the others recorded).
  // Installments first: the success of a plan's first part creates the plan (and its event) before
  // the others record what the payment did to a link or an invoice; a card-update session sets the card.
  const paymentParticipants = [installmentParticipant, linkPaymentParticipant, invoicePaymentParticipant, disputePaymentParticipant, receiptParticipant];
  const { stripe } = config;
  const processors = {
    test: stripe.test ? createStripeProcessor(stripe.test, stripe.apiUrl) : createSimulator(sql),
    live: stripe.live ? createStripeProcessor(stripe.live, stripe.apiUrl) : null,
  };
  return { config, log, sql, redis, queues, processors, paymentParticipants, mailer: createMailer(config, log), beforeClose: [] };
}

export async function closeServices(s: Services): Promise<void> {
  for (const hook of s.beforeClose.splice(0)) await hook().catch((err: unknown) => s.log.warn({ err }, 'close hook failed'));
  await s.queues.close();
  s.mailer.close();
  await s.sql.end({ timeout: 5 });
  await s.redis.quit().catch(() => s.redis.disconnect());
}
