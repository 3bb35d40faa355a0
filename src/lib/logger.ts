import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line: keys, secrets and card data. */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  'key',
  'secret',
  'signing_secret',
  '*.signing_secret',
  '*.secret',
  'card_number',
  '*.card_number',
  'cvc',
  '*.cvc',
  'exp',
  '*.exp',
  'body.number',
  'password',
  '*.password',
  // Stripe (issue 12): keys, webhook secrets, intents' client secrets, the webhook signature.
  'secretKey',
  '*.secretKey',
  'webhookSecret',
  '*.webhookSecret',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'req.headers["stripe-signature"]',
  'headers["stripe-signature"]',
];

/** The second whose ISO text `isoTime` holds, in ms since the epoch, and that text up to its dot. */
let heldSecond = Number.NaN;
let heldPrefix = '';

/**
 * pino's `stdTimeFunctions.isoTime`, the same bytes (`,"time":"2026-11-28T00:20:13.042Z"`), with
 * the date's text made once a second: only the milliseconds are written per line (issue 28: 80 ns
 * a line in a loop against pino's 490, for every request's access line). A time before 1970 or
 * past the four-digit years is written by `toISOString`, as pino does.
 */
export function isoTime(now: number = Date.now()): string {
  const ms = now % 1000;
  if (ms < 0) return `,"time":"${new Date(now).toISOString()}"`; // before 1970
  const second = now - ms;
  if (second !== heldSecond) {
    const text = new Date(now).toISOString();
    if (text.length !== 24) return `,"time":"${text}"`;
    heldSecond = second;
    heldPrefix = `,"time":"${text.slice(0, 20)}`;
  }
  return `${heldPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

/**
 * The lines waiting that make a write before LOG_FLUSH_MS has passed (sonic-boom's `minLength`; its
 * `maxWrite` must be larger). 32 KB, 4 KB until issue 28's session of 2026-11-28 from 02:38: a write
 * costs about the same CPU whatever its size up to 64 KB (150 to 270 µs on a virtual machine that
 * traps system calls, to a file or a pipe alike), so at 4 KB the access lines cost 5 to 13 µs a
 * request; at 32 KB, about one. At under some 2,000 requests a second the timer writes first.
 */
export const LOG_BLOCK_BYTES = 32 * 1024;

/**
 * The service's logger. Without `destination`, stdout, written asynchronously (logging stays off the
 * request's hot path): with `flushMs`, in blocks of up to LOG_BLOCK_BYTES at least every `flushMs`
 * (LOG_FLUSH_MS), and whatever is left when the process exits (pino flushes its destination on exit).
 */
export function createLogger(level: string, destination?: pino.DestinationStream, flushMs = 0): Logger {
  const log = pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: isoTime,
    },
    destination ?? pino.destination(flushMs > 0 ? { sync: false, minLength: LOG_BLOCK_BYTES, maxWrite: 2 * LOG_BLOCK_BYTES, periodicFlush: flushMs } : { sync: false }),
  );
  skipWildcardRedactionOfScalars(log);
  return log;
}

type Stringifier = (value: unknown, ...rest: unknown[]) => string;

/**
 * pino runs the redactor of the `*.x` paths on every top-level value of a line that has no path
 * of its own, strings and numbers included, where it can only return JSON.stringify(value): that
 * was 8 µs of a 10 µs access-log line. Scalars now go straight to JSON.stringify; objects are
 * still redacted by pino, so every line is byte for byte what it was. Child loggers inherit this.
 */
function skipWildcardRedactionOfScalars(log: Logger): void {
  const { stringifiersSym, wildcardFirstSym } = pino.symbols as unknown as Record<string, symbol>;
  const stringifiers = (log as unknown as Record<symbol, Record<symbol, Stringifier> | undefined>)[stringifiersSym!];
  const wildcard = stringifiers?.[wildcardFirstSym!];
  if (!stringifiers || typeof wildcard !== 'function') return;
  stringifiers[wildcardFirstSym!] = (value, ...rest) =>
    value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? JSON.stringify(value)
      : wildcard(value, ...rest);
}

/** Writes one `info` line of a fixed shape: `props` is its fields already as JSON (`,"k":v,…`). */
export type InfoLineWriter = (props: string, msg: string) => void;

/**
 * An `info` line of the logger with pino's own bytes, without pino's per-line work (issue 28: the
 * access line, written for every request, cost 6 to 14 µs through `log.info`). The line is what
 * `log.info(fields, msg)` writes for scalar fields: the level, the time, the bindings, the fields
 * as JSON.stringify writes them (as skipWildcardRedactionOfScalars makes pino do), the message.
 * Null when this logger could write anything else (a mixin, a log formatter, a stream hook, a
 * message prefix, a nested key, a serializer of one of `fields` (the names the lines carry), a
 * stream that wants each line's metadata): then use `log.info`. test/platform/access-line.unit.test.ts
 * compares the bytes.
 */
export function infoLineWriter(log: Logger, fields: readonly string[]): InfoLineWriter | null {
  const sym = pino.symbols as unknown as Record<string, symbol>;
  const at = (name: string) => (log as unknown as Record<symbol, unknown>)[sym[name]!];
  const stream = at('streamSym') as { write(line: string): unknown } & Record<symbol, unknown>;
  const serializers = (at('serializersSym') ?? {}) as Record<string, unknown>;
  const formatters = (at('formattersSym') ?? {}) as { log?: unknown };
  const hooks = (at('hooksSym') ?? {}) as { streamWrite?: unknown };
  if (
    at('mixinSym') ||
    formatters.log ||
    hooks.streamWrite ||
    at('msgPrefixSym') ||
    at('nestedKeySym') ||
    fields.some((k) => serializers[k]) ||
    at('messageKeySym') !== 'msg' ||
    stream[sym.needsMetadataGsym!] === true
  ) {
    return null;
  }
  const level = (at('lsCacheSym') as Record<number, string>)[30]!;
  const time = at('timeSym') as () => string;
  const chindings = at('chindingsSym') as string;
  const end = at('endSym') as string;
  return (props, msg) => {
    if (log.isLevelEnabled('info')) stream.write(`${level}${time()}${chindings}${props},"msg":${JSON.stringify(msg)}${end}`);
  };
}
