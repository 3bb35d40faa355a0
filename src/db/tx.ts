import type { Logger } from 'pino';
import { within } from '../queue/bound.ts';
import type { Sql, TxSql } from './sql.ts';

/**
 * A unit of work: the transaction's sql and hooks that run only once it has committed (enqueueing
 * jobs for the rows it wrote: DESIGN 1, transactional outbox). Nothing else: a function that needs
 * the queues, the config or the log inside a transaction is handed them (docs/architecture.md, Tx).
 */
export interface Tx {
  sql: TxSql;
  afterCommit(hook: () => unknown): void;
}

/**
 * Runs `work` in a transaction, then its after-commit hooks in order. The caller waits for the
 * hooks at most ENQUEUE_WAIT_MS: the committed rows are the promise, so a slow or absent Redis
 * never holds the answer (the hooks carry on, and the reconcile job enqueues what they could not).
 */
export async function withTx<T>(db: { sql: Sql }, log: Logger, work: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: Array<() => unknown> = [];
  const result = (await db.sql.begin((t) => work({ sql: t, afterCommit: (h) => hooks.push(h) }))) as T;
  if (hooks.length > 0) {
    await within(runHooks(hooks, log)).catch((err: Error) => log.warn({ err: err.message }, 'after-commit hooks still running; answering without them'));
  }
  return result;
}

async function runHooks(hooks: Array<() => unknown>, log: Logger): Promise<void> {
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      // The rows are committed; the reconcile job enqueues whatever this hook could not.
      log.warn({ err }, 'after-commit hook failed; reconcile will pick the work up');
    }
  }
}
