import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useServiceProcesses, within } from './service-processes.ts';

const p = useServiceProcesses('port', 20_000);
const { start, baseEnv } = p;

describe('a port that cannot be taken', () => {
  it.each([
    ['node src/web.ts', ['node', 'src/web.ts'], {}],
    ['node src/main.ts', ['node', 'src/main.ts'], {}],
    ['node src/main.ts with WEB_CONCURRENCY=2', ['node', 'src/main.ts'], { WEB_CONCURRENCY: '2' }],
  ])('when %s finds its port in use, then it exits non-zero with one clear line and never says it listens', async (_name, command, extra) => {
    const holder = net.createServer().listen(0);
    await new Promise((r) => holder.once('listening', r));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const svc = start(command, { ...baseEnv(port), ...extra });
      const exit = await within(svc.done, 45_000);
      expect(exit, 'still running 45 s after start').not.toBeNull();
      expect(exit!.code).not.toBe(0);
      const lines = svc.stderr().trim().split('\n');
      expect(lines).toEqual([`error: port ${port} is already in use (EADDRINUSE): stop the process that holds it or set PORT to a free port.`]);
      expect(svc.logs().filter((l) => l.msg === 'listening')).toEqual([]);
    } finally {
      holder.close();
    }
  }, 60_000);

  it('when npm run start:web finds its port in use, then npm exits non-zero and the line is in its output once', async () => {
    const holder = net.createServer().listen(0);
    await new Promise((r) => holder.once('listening', r));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const svc = start(['npm', 'run', 'start:web'], baseEnv(port));
      const exit = await within(svc.done, 45_000);
      expect(exit).not.toBeNull();
      expect(exit!.code).not.toBe(0);
      expect(svc.stderr().match(/already in use \(EADDRINUSE\)/g)).toHaveLength(1);
    } finally {
      holder.close();
    }
  }, 60_000);
});

