import type { PaymentParticipant } from './checkout/participants.ts';
import { receiptParticipant } from './checkout/receipt.ts';
import type { Config, StripeKeys } from './config.ts';
import { connect, ensureDatabase, poolStats, requireDatabase } from './db/sql.ts';
import { disputePaymentParticipant } from './disputes/participant.ts';
import { createMailer } from './email/transport.ts';
import { installmentParticipant } from './installments/participant.ts';
import { invoicePaymentParticipant } from './invoices/participant.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { createMetrics } from './metrics/definitions.ts';
import { instrumentProcessor } from './metrics/processor.ts';
import { linkPaymentParticipant } from './payment-links/participant.ts';
import { createSimulator } from './processor/simulator.ts';
import { Queues } from './queue/queues.ts';
import { connectRedis } from './queue/redis.ts';
import type { Services } from './services.ts';

// The composition root: the one place that builds Services (src/services.ts holds only its type).
// Imported by src/runtime.ts, scripts/, bench/ and the test helpers; nothing in src/ or workers/
// but runtime.ts imports it (test/structure), so no component can reach the others through it.

export async function createServices(config: Config, log: Logger = createLogger(config.logLevel, undefined, config.logFlushMs)): Promise<Services> {
  // Outside production a missing database is made (a laptop's first start); in production only the
  // release step (`npm run migrate`) may make one: a mistyped DATABASE_URL must not start an empty service.
  if (config.production) await requireDatabase(config.databaseUrl);
  else await ensureDatabase(config.databaseUrl);
  const redis = await connectRedis(config.redisUrl, config.redisCluster);
  const sql = connect(config.databaseUrl, config.dbPoolMax, config.dbTimeouts, config.dbSession);
  const queues = new Queues(redis, config.redisPrefix);
  await queues.openAll();
  const metrics = createMetrics({ poolStats: () => poolStats(sql) });
  const { stripe } = config;
  // stripe-node (about 560 modules, a fifth of a start's CPU) is loaded only for a mode with Stripe keys.
  const stripeProcessor = async (keys: StripeKeys) => (await import('./processor/stripe.ts')).createStripeProcessor(keys, stripe.apiUrl);
  // Every processor call is counted and timed (processor_calls_total): the wrapper is the processor.
  const live = stripe.live ? await stripeProcessor(stripe.live) : null;
  const processors = {
    test: instrumentProcessor(stripe.test ? await stripeProcessor(stripe.test) : createSimulator(sql), metrics),
    live: live && instrumentProcessor(live, metrics),
  };
  const participants: PaymentParticipant[] = [];
  const s: Services = { config, log, sql, redis, queues, processors, paymentParticipants: participants, mailer: createMailer(config, log), metrics, beforeClose: [], background: new Set() };
  participants.push(...paymentParticipants(s));
  return s;
}

/**
 * Every payment participant, listed here and only here, each built with the services it runs
 * under (it is called with a Tx, which carries none). Installments first: the success of a plan's
 * first part creates the plan (and its event) before the others record what the payment did to a
 * link or an invoice; a card-update session sets the card. Payment links hold quantity_limit;
 * invoices hold their amount due; disputes ask the processor about each new payment soon after it
 * succeeds; receipts queue the payer's email (last: it reads what the others recorded).
 */
function paymentParticipants(s: Services): PaymentParticipant[] {
  return [installmentParticipant(s), linkPaymentParticipant(s), invoicePaymentParticipant(s), disputePaymentParticipant(s), receiptParticipant(s)];
}

export async function closeServices(s: Services): Promise<void> {
  for (const hook of s.beforeClose.splice(0)) await hook().catch((err: unknown) => s.log.warn({ err }, 'close hook failed'));
  while (s.background.size) await Promise.allSettled([...s.background]);
  await s.queues.close();
  s.mailer.close();
  await s.sql.end({ timeout: 5 });
  await s.redis.quit().catch(() => s.redis.disconnect());
}
