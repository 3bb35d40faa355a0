import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/sql.ts';
import { isDatabaseUnavailable } from '../../src/lib/dependencies.ts';

// The pool of src/db/sql.ts while Postgres is going away: a server that takes the TCP connection and
// never answers (a postmaster in shutdown, whose accept backlog still completes handshakes). Each
// connection attempt then ends at the 1.5 s connect timeout. The queries queued behind the attempt
// must fail with it (patches/postgres+3.4.9.patch), not wait for one more attempt each in turn.

let server: Server;
let port = 0;
const sockets = new Set<Socket>();
let attempts = 0;

beforeAll(async () => {
  server = createServer((s) => {
    attempts++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

describe('the pool while Postgres does not answer', () => {
  it('when eight queries wait for the one connection of a pool whose attempt times out, then all eight fail with that attempt as outage errors, none waits for another attempt', async () => {
    const sql = connect(`postgres://postgres@127.0.0.1:${port}/payments`, 1);
    try {
      const settled = await Promise.all(
        Array.from({ length: 8 }, () =>
          sql`select 1`.then(
            () => ({ ok: true, unavailable: false }),
            (err: unknown) => ({ ok: false, unavailable: isDatabaseUnavailable(err) }),
          ),
        ),
      );
      expect(settled.map((s) => [s.ok, s.unavailable])).toEqual(Array.from({ length: 8 }, () => [false, true]));
      // One connection attempt for all eight (unpatched: one attempt per query, 1.5 s each in turn).
      expect(attempts).toBe(1);
    } finally {
      await sql.end({ timeout: 0 });
    }
  });
});
