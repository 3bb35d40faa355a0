import type postgres from 'postgres';

// The pool's types, as src/db/sql.ts names them (which imports this file).
type Sql = postgres.Sql;
type TxSql = postgres.TransactionSql;

/** Server-side limits on the service's statements and transactions (0 turns one off, as in Postgres). */
export interface DbTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
}

/**
 * Behind a pooler in transaction mode (PgBouncer, DATABASE_TRANSACTION_POOLING) a connection of the
 * pool is a different server session at each transaction, and PgBouncer refuses the bounds as
 * start-up parameters ("unsupported startup parameter"). So the bounds are set again at the start
 * of every transaction, local to it (`set_config(…, true)`, as `SET LOCAL`): they end with it and
 * never leak to the next client of that server session. One round trip per transaction.
 */
export function boundEachTransaction(sql: Sql, t: DbTimeouts): Sql {
  type Work = (tx: TxSql) => unknown;
  const begin = sql.begin.bind(sql) as (options: string, work: Work) => Promise<unknown>;
  const wrap =
    (work: Work): Work =>
    async (tx) => {
      await tx`select set_config('statement_timeout', ${String(t.statementMs)}, true),
        set_config('lock_timeout', ${String(t.lockMs)}, true),
        set_config('idle_in_transaction_session_timeout', ${String(t.idleInTransactionMs)}, true)`;
      const result = work(tx);
      return Array.isArray(result) ? Promise.all(result) : result;
    };
  (sql as { begin: unknown }).begin = (options: string | Work, work?: Work) =>
    typeof options === 'function' ? begin('', wrap(options)) : begin(options, wrap(work!));
  return sql;
}

/** The Postgres setting behind each bound. */
const SETTING_NAMES = { statementMs: 'statement_timeout', lockMs: 'lock_timeout', idleInTransactionMs: 'idle_in_transaction_session_timeout' } as const;

/**
 * Statements outside a transaction (a read, a single-statement update on the pool) get no
 * `set_config`: behind a transaction pooler they are bounded by the server's defaults for the
 * service's role in its database, which this writes (`ALTER ROLE current_user IN DATABASE … SET`:
 * any role may set its own). PgBouncer's server sessions opened afterwards start with them; those
 * already open keep the old values until PgBouncer replaces them (`server_lifetime`, or RECONNECT).
 * Run by `npm run migrate` (and `npm start`) when DATABASE_TRANSACTION_POOLING is on, in a
 * transaction holding the migrations' lock (concurrent ALTER ROLEs of one role can collide).
 */
export async function setRoleBounds(tx: TxSql, t: DbTimeouts): Promise<void> {
  const [row] = await tx<{ db: string }[]>`select current_database() as db`;
  for (const [key, name] of Object.entries(SETTING_NAMES) as Array<[keyof DbTimeouts, string]>) {
    // ALTER ROLE takes no bind parameters: the value is an integer of the configuration, the names are fixed.
    await tx`alter role current_user in database ${tx(row!.db)} set ${tx.unsafe(name)} = ${tx.unsafe(String(Math.trunc(t[key])))}`;
  }
}

/**
 * The bounds a statement outside a transaction runs under now (a server session's defaults) that
 * are looser than the configuration: none, or a larger value. Empty when every bound holds.
 */
export async function looserRoleBounds(sql: Sql, t: DbTimeouts): Promise<Array<{ setting: string; configuredMs: number; serverMs: number }>> {
  const names = Object.values(SETTING_NAMES);
  const rows = await sql<{ name: string; setting: string }[]>`select name, setting from pg_settings where name = any(${names}::text[])`;
  const server = new Map(rows.map((r) => [r.name, Number(r.setting)]));
  return (Object.entries(SETTING_NAMES) as Array<[keyof DbTimeouts, string]>)
    .map(([key, setting]) => ({ setting, configuredMs: t[key], serverMs: server.get(setting) ?? 0 }))
    .filter((b) => b.configuredMs > 0 && (b.serverMs === 0 || b.serverMs > b.configuredMs));
}
