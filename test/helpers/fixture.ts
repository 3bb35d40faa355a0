import { afterAll, beforeAll } from 'vitest';

/**
 * A fixture of a file (or of a describe block): `start` in beforeAll, `end` in afterAll. The
 * answer reads it inside hooks and tests, and says which hook starts it when read too early.
 */
export function useStarted<T>(what: string, start: () => Promise<T>, end: (fixture: T) => Promise<unknown>): () => T {
  let fixture: T | undefined;
  beforeAll(async () => {
    fixture = await start();
  });
  afterAll(async () => {
    if (fixture !== undefined) await end(fixture);
  });
  return () => {
    if (fixture === undefined) throw new Error(`${what} starts in beforeAll: use it inside a hook or a test`);
    return fixture;
  };
}
