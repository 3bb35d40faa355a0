import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, infoLineWriter, isoTime } from '../../src/lib/logger.ts';

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

describe("the log lines' time", () => {
  /** pino's own isoTime at `now`. */
  const pinoAt = (now: number) => {
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
    try {
      return pino.stdTimeFunctions.isoTime();
    } finally {
      clock.mockRestore();
    }
  };

  it('when times run millisecond by millisecond across seconds, days and a year, or jump about, then each is what pino writes', () => {
    const newYear = Date.UTC(2027, 0, 1);
    const times: number[] = [0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 8.64e15, -8.64e15, 253402300799999, 253402300800000, -62167219200001];
    for (let t = newYear - 2_500; t < newYear + 2_500; t++) times.push(t);
    let seed = 28;
    for (let i = 0; i < 5_000; i++) {
      seed = (seed * 1_664_525 + 1_013_904_223) >>> 0;
      times.push(Math.floor((seed / 2 ** 32) * 4e12));
    }
    for (const t of times) expect(isoTime(t), String(t)).toBe(pinoAt(t));
    // Backwards too (a clock set back): the held second is replaced, not trusted.
    for (const t of times.reverse()) expect(isoTime(t), String(t)).toBe(pinoAt(t));
  });

  it("when the service's logger writes a line, then its time is the clock's", () => {
    const { lines, dest } = { lines: [] as string[], dest: { write: (line: string) => void lines.push(line) } };
    const before = Date.now();
    createLogger('info', dest).info('hello');
    const after = Date.now();
    const time = Date.parse((JSON.parse(lines[0]!) as { time: string }).time);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });
});
