import postgres from 'postgres';
import { StartupError } from '../lib/dependencies.ts';
import { boundEachTransaction, type DbTimeouts } from './bounds.ts';

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

/** The database a URL names (its path, decoded); a StartupError when it names none. */
function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!name) throw new StartupError(`DATABASE_URL names no database: ${url}`);
  return name;
}

/** One start-up line for a failed first connection: a login refused, a database missing, or nothing answering. */
function startupErrorOf(err: unknown, url: string): StartupError {
  if (err instanceof StartupError) return err;
  const code = (err as { code?: string }).code ?? (err as Error).message;
  const message = (err as Error).message ?? String(err);
  if (code === '28P01' || code === '28000') {
    return new StartupError(`PostgreSQL at ${describe(url)} refused the login (${code}: ${message}): set DATABASE_URL with a user and password it accepts.`);
  }
  // 3D000: Postgres itself; PgBouncer answers "no such database" for a name it does not route.
  if (code === '3D000' || /no such database/i.test(message)) {
    return new StartupError(
      `the database "${databaseName(url)}" does not exist at ${describe(url)}: in production only the release step creates it (\`npm run migrate\`, the Procfile's release); run it, or correct DATABASE_URL if the name is wrong.`,
    );
  }
  return new StartupError(`PostgreSQL is not reachable at ${describe(url)} (${code}): ${PG_HINT}.`);
}

/**
 * Creates the database named in `url` when it does not exist yet, through the server's `postgres`
 * database; answers whether it did. Outside production at every start, and `npm run migrate` always.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [row] = await sql`select 1 as ok from pg_database where datname = ${name}`;
    if (row) return false;
    return await sql`create database ${sql(name)}`.then(
      () => true,
      (err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by another process
        return false;
      },
    );
  } catch (err) {
    throw startupErrorOf(err, url);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Checks that the database named in `url` exists and answers, connecting to it and nothing else
 * (never the server's `postgres` database: behind PgBouncer only the routed names exist). In
 * production the web and worker processes use this: a missing database is a start-up error,
 * never a new empty one (docs/decisions.md, "The newcomer's path, second pass").
 */
export async function requireDatabase(url: string): Promise<void> {
  databaseName(url);
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await sql`select 1`;
  } catch (err) {
    throw startupErrorOf(err, url);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** What the pool is doing now (the `stats` that patches/postgres+3.4.9.patch adds to postgres.js). */
export interface PoolState {
  /** DB_POOL_MAX. */
  max: number;
  /** Connected and idle. */
  open: number;
  /** Running one query or more. */
  busy: number;
  /** Held by a transaction (sql.begin) or a reserved connection. */
  reserved: number;
  connecting: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** The pool's state, or null when postgres.js is not the patched one (the metrics then leave the pool out). */
export function poolStats(sql: Sql): PoolState | null {
  const stats = (sql as unknown as { stats?: () => PoolState }).stats;
  return typeof stats === 'function' ? stats() : null;
}

/**
 * How the pool talks to Postgres. `transactionPooling`: DATABASE_URL is a pooler in transaction
 * mode (PgBouncer), where a connection is a new server session at each transaction: no start-up
 * parameters (the bounds are set in each transaction instead, src/db/bounds.ts). `prepare`: named
 * prepared statements (postgres.js's default), which such a pooler breaks: a statement prepared in
 * one server session is missing in the next ("prepared statement … does not exist"), and the
 * query waits for ever.
 */
export interface DbSession {
  transactionPooling: boolean;
  prepare: boolean;
}

export function connect(url: string, max: number, timeouts?: DbTimeouts, session: DbSession = { transactionPooling: false, prepare: true }): Sql {
  const sql = postgres(url, {
    max,
    prepare: session.prepare,
    // Sent as startup parameters: every connection of the pool has them from its first statement.
    connection:
      timeouts && !session.transactionPooling
        ? {
            statement_timeout: timeouts.statementMs,
            lock_timeout: timeouts.lockMs,
            idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
          }
        : {},
    // No pipelining behind a transaction pooler: PgBouncer 1.18 hands a server session back at the
    // ReadyForQuery that ends one query while the next query, sent behind it on the same connection,
    // is already on that session; its answer is lost and the query waits for ever (seen in
    // test/ops/pgbouncer.test.ts with postgres.js's default of 100 queries in flight per connection).
    ...(session.transactionPooling ? { max_pipeline: 0 } : {}),
    onnotice: () => {},
    // While Postgres is away (a restart, a failover) a query waits at most for one connection
    // attempt: refused at once, or given up after 1.5 s; it then fails and the caller answers 503,
    // and so do the queries queued behind that attempt (patches/postgres+3.4.9.patch, onclose).
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
  return timeouts && session.transactionPooling ? boundEachTransaction(sql, timeouts) : sql;
}
