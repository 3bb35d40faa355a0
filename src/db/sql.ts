import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TxSql = postgres.TransactionSql;

/** A dependency that is not there at start-up: printed as one line, then the process exits non-zero. */
export class StartupError extends Error {}

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
    connect_timeout: 10,
    idle_timeout: 60,
    // int8 (counts, sums) as numbers: amounts stay well inside 2^53.
    types: {
      int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
  });
}
