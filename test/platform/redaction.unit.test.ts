import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACT_PATHS } from '../../src/lib/logger.ts';

// createLogger skips pino's wildcard redactor for scalar values (a hot-path saving); these lines
// must come out exactly as plain pino redaction writes them.
const LINES: Array<Record<string, unknown>> = [
  { method: 'GET', path: '/v1/customers', status: 200, ms: 1.2, ok: true, none: null },
  { authorization: 'Bearer sk_test_x', key: 'sk_live_x', secret: 's', password: 'p', exp: 12, cvc: null, card_number: 4242, signing_secret: true },
  { headers: { authorization: 'a', host: 'h' }, req: { headers: { authorization: 'b', cookie: 'c', host: 'h' } }, body: { number: '4242', cvc: '1' } },
  { user: { password: 'p', name: 'n' }, endpoint: { secret: 's', signing_secret: 'w', url: 'u' }, list: [{ password: 'x' }, 1] },
  { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, text: 'a"b\\c\n\u0001\ud800', long: 'x'.repeat(100), nested: { deep: { password: 'p' } } },
  { err: Object.assign(new Error('boom'), { secret: 's', code: 'E_X' }) },
];

function capture(make: (dest: pino.DestinationStream) => pino.Logger): string[] {
  const out: string[] = [];
  const log = make({ write: (line: string) => void out.push(line.replace(/,"time":"[^"]+"/, '')) });
  for (const logger of [log, log.child({ reqId: 'req_1', password: 'x', nested: { secret: 's' } })]) {
    for (const line of LINES) {
      logger.info(line, 'message "quoted"');
      logger.warn(line);
    }
    logger.info('formatted %s %j', 'text', { password: 'p', secret: 1 });
  }
  return out;
}

describe('log redaction', () => {
  it('when scalars, secrets and nested secrets are logged, then the lines equal plain pino redaction, byte for byte', () => {
    const ours = capture((dest) => createLogger('info', dest));
    const plain = capture((dest) =>
      pino({ level: 'info', base: { pid: process.pid }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime }, dest),
    );
    expect(ours).toHaveLength(26);
    expect(ours).toEqual(plain);
    expect(ours.join('')).not.toMatch(/sk_test_x|sk_live_x|"4242"/);
  });
});
