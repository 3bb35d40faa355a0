import postgres from 'postgres';
import { StartupError } from '../lib/dependencies.ts';

export type Sql = postgres.Sql;
export type TxSql = postgres.TransactionSql;
/** What a store function runs its statements on: the pool, or the transaction it is called in. */
export type Db = Sql | TxSql;


const PG_HINT =
  'start it (for example `pg_ctlcluster 15 main start`, or `docker run -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`) or set DATABASE_URL';

function describe(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}`;
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) throw new StartupError(`DATABASE_URL names no database: ${url}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql`select 1 as ok from pg_database where datname = ${name}`;
    if (!row) {
      await sql`create database ${sql(name)}`.catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by another process
      });
    }
  } catch (err) {
    if (err instanceof StartupError) throw err;
    const code = (err as { code?: string }).code ?? (err as Error).message;
    if (code === '28P01' || code === '28000') {
      throw new StartupError(`PostgreSQL at ${describe(url)} refused the login (${code}: ${(err as Error).message}): set DATABASE_URL with a user and password it accepts.`);
    }
    throw new StartupError(`PostgreSQL is not reachable at ${describe(url)} (${code}): ${PG_HINT}.`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Server-side limits set on every connection of a pool (0 turns one off, as in Postgres). */
export interface DbTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
}

export function connect(url: string, max: number, timeouts?: DbTimeouts): Sql {
  return postgres(url, {
    max,
    // Sent as startup parameters: every connection of the pool has them from its first statement.
    connection: timeouts
      ? {
          statement_timeout: timeouts.statementMs,
          lock_timeout: timeouts.lockMs,
          idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
        }
      : {},
    onnotice: () => {},
    // While Postgres is away (a restart, a failover) a query waits at most for one connection
    // attempt: refused at once, or given up after 1.5 s; it then fails and the caller answers 503.
    connect_timeout: 1.5,
    // postgres.js's default backoff grows to 20 s after a few failed attempts, and queries queued on
    // a connection wait it out: that was the 16 s of the restart drill. At most 250 ms between attempts.
    backoff: (attempt: number) => Math.min(0.02 * 2 ** attempt, 0.25),
    idle_timeout: 60,
    // int8 (counts, sums) as numbers: amounts stay well inside 2^53.
    types: {
      int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
  });
}
