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
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Asynchronous writes: logging stays off the request's hot path.
    destination ?? pino.destination({ sync: false }),
  );
}
