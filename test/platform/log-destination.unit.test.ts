import fs, { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';

// patches/sonic-boom+4.2.1.patch: the destination of the service's logger (pino.destination, a
// SonicBoom) keeps the byte length of its last buffer instead of measuring it again for every
// line (Buffer.byteLength of a string built by appends copies the whole buffer, issue 28).
describe('the log destination (sonic-boom, patched)', () => {
  it('when lines of one- and many-byte characters are written faster than they leave, then the file holds each once, in order', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sonic-')), 'out.log');
    // As the service's logger (minLength 4096), with a small maxWrite so that buffers fill and a new one starts often.
    const dest = pino.destination({ dest: file, sync: false, minLength: 512, maxWrite: 1024 });
    await new Promise((r) => dest.once('ready', r));
    expect(dest.write.toString()).toContain('_lastBufLen'); // the patch is applied (postinstall)
    const lines: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const line = `{"n":${i},"text":"${'é'.repeat(i % 7)}${'☕'.repeat(i % 3)}${'x'.repeat(i % 300)}"}\n`;
      lines.push(line);
      dest.write(line);
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    // end() waits for the writes out (flushSync would not: it writes what is queued at once, ahead
    // of a write still out, which reorders the lines; sonic-boom's own behaviour, patched or not).
    const closed = new Promise((r) => dest.once('close', r));
    dest.end();
    await closed;
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('when nothing is waiting, then the periodic flush writes nothing; a line that waits still leaves within the interval', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sonic-')), 'out.log');
    // As the service's logger: lines kept until 4 KB wait or the timer fires (LOG_FLUSH_MS).
    const dest = pino.destination({ dest: file, sync: false, minLength: 4096, periodicFlush: 20 });
    await new Promise((r) => dest.once('ready', r));
    const writes = vi.spyOn(fs, 'write');
    try {
      // Ten intervals with nothing to write: before the patch, ten writes of zero bytes.
      await new Promise((r) => setTimeout(r, 200));
      expect(writes).not.toHaveBeenCalled();
      dest.write('{"msg":"one line"}\n');
      await vi.waitFor(() => expect(readFileSync(file, 'utf8')).toBe('{"msg":"one line"}\n'), { timeout: 1000, interval: 10 });
      expect(writes).toHaveBeenCalledTimes(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(writes).toHaveBeenCalledTimes(1);
    } finally {
      writes.mockRestore();
      const closed = new Promise((r) => dest.once('close', r));
      dest.end();
      await closed;
    }
  });
});
