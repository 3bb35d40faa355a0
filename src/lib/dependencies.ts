/**
 * Postgres or Redis away: at start-up (a StartupError, printed as one line before the process exits
 * non-zero) or while serving (isDatabaseUnavailable: answered 503, never a crash). Pure, so that
 * lib/http.ts and the pages can tell an outage from a bug without depending on db/.
 */

/** A dependency that is not there at start-up: printed as one line, then the process exits non-zero. */
export class StartupError extends Error {}

// Postgres.js's own connection errors, the socket's, and the server's "going away" states
// (57P01-57P03 admin/crash shutdown and start-up, class 08 connection exceptions, 53300 too many connections).
const UNAVAILABLE_CODES = new Set([
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300',
]);

/** True when `err` says Postgres cannot be reached right now (an outage), not that a statement is wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = err && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'));
}
