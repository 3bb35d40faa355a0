import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A process of the service loads only what it needs to start: the packages of rare paths (Stripe
// keys set, a passkey, an email sent, an invoice PDF, the queue board, a QR code) are imported where
// they are used, on first use (docs/decisions.md, "Start-up: packages loaded on first use"). Each
// was about a tenth of a start's CPU or more; together, a third of the modules' load.

const ROOT = join(import.meta.dirname, '../..');
const ON_FIRST_USE = ['stripe', '@simplewebauthn/server', 'nodemailer', 'pdfkit', '@bull-board/api', '@bull-board/express', 'qrcode'];

/** The packages a fresh Node process resolves while it imports `entries` (paths from the repository root). */
function packagesLoaded(entries: string[]): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({
      resolve(spec, ctx, next) {
        const r = next(spec, ctx);
        const at = r.url.lastIndexOf('/node_modules/');
        if (at >= 0) { const parts = r.url.slice(at + 14).split('/'); seen.add(parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]); }
        return r;
      },
    });
    for (const e of ${JSON.stringify(entries.map((e) => join(ROOT, e)))}) await import(e);
    console.log(JSON.stringify([...seen]));
    process.exit(0);`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as string[];
}

describe('what a process loads at start', () => {
  it('when every module of the web and worker processes is imported, then the packages of rare paths are not, and the ones every process needs are', () => {
    const loaded = packagesLoaded(['src/runtime.ts', 'src/compose.ts', 'src/app.ts', 'workers/index.ts']);
    expect(loaded).toEqual(expect.arrayContaining(['express', 'postgres', 'bullmq', 'ioredis', 'zod', 'pino', 'got']));
    expect(loaded.filter((p) => ON_FIRST_USE.includes(p))).toEqual([]);
  });

  it('when the modules that use them are imported, then nothing of theirs loads until a first use either', () => {
    const users = ['src/processor-events/routes.ts', 'src/dashboard/security/passkeys.ts', 'src/email/transport.ts', 'src/invoices/pdf.ts', 'src/admin/board.ts', 'src/dashboard/security/pages.ts', 'src/dashboard/payment-links/pages.ts'];
    expect(packagesLoaded(users).filter((p) => ON_FIRST_USE.includes(p))).toEqual([]);
  });
});
