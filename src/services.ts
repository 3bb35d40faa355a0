import type { PaymentParticipant } from './checkout/participants.ts';
import type { Config } from './config.ts';
import type { Sql } from './db/sql.ts';
import type { Mailer } from './email/transport.ts';
import type { Logger } from './lib/logger.ts';
import type { Metrics } from './metrics/definitions.ts';
import type { Processor } from './processor/types.ts';
import type { Queues } from './queue/queues.ts';
import type { RedisClient } from './queue/redis.ts';

// Types only: every part of the service names `Services`, so this file imports nothing but types,
// and only of modules that never name `Services` themselves (no import cycle, type imports counted:
// test/structure). The composition root that builds it is src/compose.ts.

/** What every part of the service is handed: built once by the composition root (src/compose.ts), passed explicitly. */
export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  /** One Redis, or a Redis Cluster (REDIS_CLUSTER_NODES). */
  redis: RedisClient;
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
  /** This process's metrics (src/metrics/definitions.ts): one registry, served at GET /metrics when configured. */
  metrics: Metrics;
  /** Run first by closeServices (src/compose.ts), while Redis and Postgres are still open (flushing buffers). */
  beforeClose: Array<() => Promise<void>>;
  /**
   * Work started after its answer has left (the portal's sign-in links): closeServices waits for it,
   * and so can a test that asserts what this work did, or did not, do (`settled` in test/helpers/wait.ts).
   */
  background: Set<Promise<void>>;
}
