import type { Logger } from 'pino';
import type { Sql, TxSql } from './sql.ts';

/**
 * A unit of work: the transaction's sql, and hooks that run only once it has committed
 * (enqueueing jobs for the rows it wrote: DESIGN 1, transactional outbox).
 */
export interface Tx {
  sql: TxSql;
  afterCommit(hook: () => unknown): void;
  /** The pool the transaction runs on (lets code holding only a Tx find what is bound to it). */
  db?: Sql;
}

export async function withTx<T>(sql: Sql, log: Logger, work: (tx: Tx) => Promise<T>): Promise<T> {
  const hooks: Array<() => unknown> = [];
  const result = (await sql.begin((t) => work({ sql: t, db: sql, afterCommit: (h) => hooks.push(h) }))) as T;
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      // The rows are committed; the reconcile job enqueues whatever this hook could not.
      log.warn({ err }, 'after-commit hook failed; reconcile will pick the work up');
    }
  }
  return result;
}
