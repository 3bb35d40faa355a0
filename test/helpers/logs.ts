import { beforeEach } from 'vitest';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/lib/logger.ts';
import { eventually } from './wait.ts';

export interface LogCapture {
  log: Logger;
  readonly text: string;
  /** The lines whose message is `msg`, parsed. */
  messages(msg: string): Array<Record<string, unknown>>;
  /** Waits until a line with message `msg` (and matching `filter`) has been written; answers it. */
  waitFor(msg: string, filter?: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Forgets what was written so far. */
  clear(): void;
}

/** The service's logger writing to memory (give `log` to the test server), and what it wrote. */
export function logCapture(level = 'info'): LogCapture {
  let text = '';
  const log = createLogger(
    level,
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString();
        cb();
      },
    }),
  );
  const messages = (msg: string) =>
    text
      .split('\n')
      .filter((l) => l.includes(`"msg":${JSON.stringify(msg)}`))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    log,
    get text() {
      return text;
    },
    messages,
    waitFor: (msg, filter = () => true, timeoutMs = 15_000) => eventually(async () => messages(msg).find(filter), timeoutMs),
    clear() {
      text = '';
    },
  };
}

/**
 * A log capture for a file: the same object all along (its logger goes to the test server's
 * options), emptied before each test when `clearEach` is set, so a test reads only its own lines.
 */
export function useLogCapture(level = 'info', opts: { clearEach?: boolean } = {}): LogCapture {
  const capture = logCapture(level);
  if (opts.clearEach) beforeEach(() => capture.clear());
  return capture;
}
