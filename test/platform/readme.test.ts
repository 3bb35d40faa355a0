import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dbUrl, dropRedisPrefix, freePort, root } from '../helpers/process.ts';
import { globMatches, isApiError, readBlocks, readCommands, shownAnswer, withPorts, type Block } from '../helpers/readme.ts';
import { eventually } from '../helpers/wait.ts';

// Issue 22, point 4: every code block of README.md runs, in order, in one bash shell, against one
// service started as the README starts it (`npm start`, in the background, on a port other than
// 3000), with listen and the receiver as the README runs them; each answer is compared with what
// the README shows, by the rule of test/helpers/readme.ts (stated in the README too).

const README = readFileSync(join(root, 'README.md'), 'utf8');
const COMMAND_TIMEOUT_MS = 90_000;
const OUTPUT_TIMEOUT_MS = 60_000;

const database = `t_readme_${randomBytes(4).toString('hex')}`;
const prefix = database;
const work = mkdtempSync(join(tmpdir(), 'readme-'));
let shell: Shell | undefined;

afterAll(async () => {
  shell?.close();
  const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
  await admin`drop database if exists ${admin(database)} with (force)`;
  await admin.end();
  await dropRedisPrefix(prefix);
  if (!process.env.README_KEEP) rmSync(work, { recursive: true, force: true });
});

/** One bash, fed command by command; each command's output, error output and status kept in files of `work`. */
class Shell {
  readonly #child: ChildProcessWithoutNullStreams;
  #said = '';
  #seq = 0;

  constructor(env: NodeJS.ProcessEnv) {
    // A process group of its own: the service, listen and the receiver it starts are stopped with it.
    this.#child = spawn('bash', ['--noprofile', '--norc'], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.#child.stdout.on('data', (d: Buffer) => (this.#said += d.toString()));
    this.#child.stderr.on('data', (d: Buffer) => (this.#said += d.toString()));
  }

  async #send(script: string, timeoutMs: number): Promise<number> {
    const n = ++this.#seq;
    this.#child.stdin.write(`${script}\necho "@@done ${n}"\n`);
    await eventually(async () => this.#said.includes(`@@done ${n}\n`) || this.#child.exitCode !== null, timeoutMs, 20);
    if (this.#child.exitCode !== null) throw new Error(`the shell ended (${this.#child.exitCode}): ${this.#said.slice(-2000)}`);
    return n;
  }

  /** Runs one command of a block in the shell itself (its variables stay), stdin closed. */
  async run(command: string): Promise<{ stdout: string; stderr: string; code: number }> {
    const n = this.#seq + 1;
    const file = (ext: string) => join(work, `${n}.${ext}`);
    await this.#send(`{ ${command}\n} </dev/null >"${file('out')}" 2>"${file('err')}"\necho "$?" >"${file('rc')}"`, COMMAND_TIMEOUT_MS);
    return { stdout: readFileSync(file('out'), 'utf8'), stderr: readFileSync(file('err'), 'utf8'), code: Number(readFileSync(file('rc'), 'utf8')) };
  }

  /**
   * Runs a background block: its output goes to a log file of its own. A block whose commands end
   * in `&` starts its jobs in this shell (so `kill %node` later finds them); any other block is put
   * in the background whole.
   */
  async background(text: string, log: string): Promise<void> {
    const own = /&\s*(#.*)?$/.test(text.trim().split('\n').at(-1)!);
    await this.#send(`{ ${text}\n} </dev/null >"${log}" 2>&1${own ? '' : ' &'}`, COMMAND_TIMEOUT_MS);
  }

  close(): void {
    try {
      process.kill(-this.#child.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
}

/**
 * The output of the background processes. A block of shown lines is looked for in what they printed
 * since the shell block before it started (`mark`), each line after the one before it in the same
 * log: the lines that block caused, not older ones, whichever process printed them first.
 */
class BackgroundOutput {
  readonly logs: string[] = [];
  #since = new Map<string, number>();

  lines(log: string): string[] {
    return existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
  }

  /** Called before each block: what the background has printed so far is not its doing. */
  mark(): void {
    this.#since = new Map(this.logs.map((log) => [log, Math.max(0, this.lines(log).length - 1)]));
  }

  /** Waits until each shown line appears, in order, in the output of a background process. */
  async expect(shown: string[], where: string): Promise<void> {
    const cursor = new Map(this.#since);
    for (const line of shown) {
      await eventually(
        async () => {
          for (const log of this.logs) {
            const lines = this.lines(log);
            const from = cursor.get(log) ?? 0;
            const at = lines.findIndex((l, i) => i >= from && globMatches(line.trim(), l.trim(), true));
            if (at >= 0) return cursor.set(log, at + 1);
          }
          return false;
        },
        OUTPUT_TIMEOUT_MS,
        100,
      ).catch(() => {
        const seen = this.logs.map((log) => `--- ${log}\n${this.lines(log).slice(-30).join('\n')}`).join('\n');
        throw new Error(`${where}: no background process printed\n  ${line}\nwithin ${OUTPUT_TIMEOUT_MS / 1000} s; their output ends:\n${seen}`);
      });
    }
  }
}

describe('the README, run in order', () => {
  it('when every code block runs in one shell against a service on another port than 3000, then each command answers what the README shows', async () => {
    const blocks = readBlocks(README);
    const port = String(await freePort());
    const receiverPort = String(await freePort());
    const ports = { 3000: port, 4000: receiverPort };
    if (process.env.README_KEEP) console.log("work dir", work);
    shell = new Shell({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: 'C.UTF-8',
      // What a newcomer whose port 3000 is taken sets; the database and Redis are the test's own.
      PORT: port,
      RECEIVER_PORT: receiverPort,
      DATABASE_URL: dbUrl(database),
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: prefix,
    });
    const background = new BackgroundOutput();
    const ran = { commands: 0, answers: 0, skipped: [] as string[] };

    for (const [i, block] of blocks.entries()) {
      const where = `README.md:${block.line}`;
      if (block.marker?.kind === 'skip') {
        ran.skipped.push(`${where} (${block.marker.why})`);
        continue;
      }
      if (block.marker?.kind === 'file') {
        expect(block.text.trimEnd(), `${where} is not ${block.marker.path}`).toBe(readFileSync(join(root, block.marker.path), 'utf8').trimEnd());
        continue;
      }
      if (block.lang === '') {
        await background.expect(block.text.split('\n').filter((l) => l.trim() !== '').map((l) => withPorts(l, ports)), where);
        continue;
      }
      if (block.lang !== 'sh') throw new Error(`${where}: a \`${block.lang}\` block neither runs nor is marked (readme-test: skip or same as)`);
      if (block.marker?.kind === 'background') {
        const log = join(work, `background-${i}.log`);
        background.mark();
        background.logs.push(log);
        await shell.background(block.text, log);
        continue;
      }
      await runBlock(shell, block, ports, ran, background);
    }
    // The few blocks that do not run are named here, so that a new one is a decision.
    expect(ran.skipped.map((s) => s.replace(/^README\.md:\d+ /, ''))).toEqual(SKIPPED);
    expect(ran.commands).toBeGreaterThan(100);
    expect(ran.answers).toBeGreaterThan(40);
  }, 15 * 60_000);
});

/** Why each skipped block does not run, in README order. */
const SKIPPED = [
  '(the test runs in an installed clone)',
  '(the test suite itself)',
  '(a program of your own, with the client installed: test/client/ runs the client)',
  '(a service started with other settings, watched for minutes)',
  '(SQL for your own database)',
];

async function runBlock(shell: Shell, block: Block, ports: Record<string, string>, ran: { commands: number; answers: number }, background: BackgroundOutput): Promise<void> {
  background.mark();
  for (const command of readCommands(block)) {
    const where = `README.md:${command.line}`;
    const r = await shell.run(command.text);
    ran.commands++;
    const said = `\n$ ${command.text}\n--- stdout\n${r.stdout.slice(0, 3000)}\n--- stderr\n${r.stderr.slice(-2000)}`;
    if (command.answer) {
      ran.answers++;
      const shown = shownAnswer(command.answer, ports);
      expect(r.code, `${where}: exit status${said}`).toBe(shown.exit);
      const problem = shown.matches(r.stdout);
      expect(problem, `${where}: the answer is not the one shown\n--- shown\n${shown.text}${said}`).toBeNull();
    } else {
      expect(r.code, `${where}: exit status${said}`).toBe(0);
      expect(isApiError(r.stdout), `${where}: an error answer the README does not show${said}`).toBe(false);
    }
  }
}
