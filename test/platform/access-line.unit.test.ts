import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, infoLineWriter } from '../../src/lib/logger.ts';

// The access line is written by hand (infoLineWriter) with the bytes pino writes for the same
// fields: each case is logged both ways and compared, the clock being the one difference.
const FIELDS: Array<{ reqId: string; method: string; path: string; status: number; ms: number }> = [
  { reqId: 'req_abc', method: 'GET', path: '/v1/customers/cus_1', status: 200, ms: 1.2 },
  { reqId: 'req_abc', method: 'POST', path: '/l/a"b\\c\u0001é\u00ff', status: 404, ms: 0 },
  { reqId: 'req_abc', method: 'M-SEARCH', path: '/' + 'x'.repeat(300), status: 500, ms: 12345.6 },
];

const NAMES = ['reqId', 'method', 'path', 'status', 'ms'];

const props = (f: (typeof FIELDS)[number]) =>
  `,"reqId":${JSON.stringify(f.reqId)},"method":${JSON.stringify(f.method)},"path":${JSON.stringify(f.path)},"status":${f.status},"ms":${f.ms}`;

function sink() {
  const lines: string[] = [];
  return { lines, dest: { write: (line: string) => void lines.push(line.replace(/,"time":"[^"]+"/, ',"time":"T"')) } };
}

describe('the access line written by hand', () => {
  it('when a request is logged, then the line equals log.info with the same fields, byte for byte, from the logger and a child', () => {
    const a = sink();
    const b = sink();
    const viaPino = createLogger('info', a.dest);
    const byHand = infoLineWriter(createLogger('info', b.dest), NAMES);
    expect(byHand).not.toBeNull();
    for (const f of FIELDS) {
      viaPino.info(f, 'request');
      viaPino.child({ reqId: f.reqId }).info({ method: f.method, path: f.path, status: f.status, ms: f.ms }, 'request');
      byHand!(props(f), 'request');
      byHand!(props(f), 'request');
    }
    expect(b.lines).toEqual(a.lines);
    expect(JSON.parse(b.lines[2]!)).toMatchObject({ level: 30, pid: process.pid, path: FIELDS[1]!.path, msg: 'request' });
  });

  it('when the level is above info, then nothing is written', () => {
    const out = sink();
    const log = createLogger('info', out.dest);
    const write = infoLineWriter(log, NAMES)!;
    log.level = 'warn';
    write(props(FIELDS[0]!), 'request');
    expect(out.lines).toEqual([]);
  });

  it('when the logger has a mixin, a formatter, a stream hook or a serializer of a field, then there is no writer (log.info is used)', () => {
    const dest = sink().dest;
    expect(infoLineWriter(pino({ mixin: () => ({ extra: 1 }) }, dest), NAMES)).toBeNull();
    expect(infoLineWriter(pino({ formatters: { log: (o) => o } }, dest), NAMES)).toBeNull();
    expect(infoLineWriter(pino({ hooks: { streamWrite: (s) => s } }, dest), NAMES)).toBeNull();
    expect(infoLineWriter(pino({ messageKey: 'message' }, dest), NAMES)).toBeNull();
    expect(infoLineWriter(pino({ serializers: { path: (p: string) => p } }, dest), NAMES)).toBeNull();
    expect(infoLineWriter(pino({}, dest), NAMES)).not.toBeNull();
  });
});
