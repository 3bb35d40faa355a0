import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { sleep } from './wait.ts';

const exec = promisify(execFile);

/** A port free on 127.0.0.1 whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if ((await free(port)) && (await free(port + 10_000))) return port;
  }
}

export interface ClusterNode {
  port: number;
  proc: ChildProcess;
}

/**
 * A Redis Cluster of this test file alone: `masters` masters with one replica each, every node a
 * `redis-server --cluster-enabled yes` on a free loopback port, in a temporary folder, without
 * persistence, joined by `redis-cli --cluster create`. `cluster-node-timeout` is low (1 s) so that
 * a master killed is replaced by its replica within a few seconds, and a replica's first copy starts
 * at once (`repl-diskless-sync-delay 0`: by default the master waits 5 s for more replicas, and a
 * master killed before its replica has a copy is never replaced). Never the shared Redis.
 */
export async function startRedisCluster(masters = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const taken = new Set<number>();
  const nodes: ClusterNode[] = [];
  const killAll = () => nodes.forEach((n) => n.proc.kill('SIGKILL'));
  // A test that times out never reaches its clean-up: the servers go with the test process.
  process.once('exit', killAll);
  for (let i = 0; i < masters * 2; i++) {
    const port = await clusterPort(taken);
    taken.add(port);
    const proc = spawn(
      'redis-server',
      [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '1000',
        '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0', '--dir', dir, '--daemonize', 'no', '--logfile', join(dir, `${port}.log`),
      ],
      { stdio: 'ignore' },
    );
    nodes.push({ port, proc });
  }
  const command = async (port: number, ...args: string[]): Promise<unknown> => {
    const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      return await c.call(args[0]!, ...args.slice(1));
    } finally {
      c.disconnect();
    }
  };
  for (const n of nodes) {
    const deadline = Date.now() + 10_000;
    while ((await command(n.port, 'PING').catch(() => null)) !== 'PONG') {
      if (Date.now() > deadline) throw new Error(`cluster node on ${n.port} did not start`);
      await sleep(50);
    }
  }
  await exec('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 });

  const alive = () => nodes.filter((n) => n.proc.exitCode === null && n.proc.signalCode === null);
  /** `CLUSTER NODES` as seen from a live node: who is master of which slots, and who has failed. */
  const topology = async () => {
    const text = String(await command(alive()[0]!.port, 'CLUSTER', 'NODES'));
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const [id, addr, flags, master, , , , link, ...slots] = line.split(' ');
        const ranges = slots.filter((s) => /^\d/.test(s)).map((s) => s.split('-').map(Number) as [number, number?]);
        return {
          id: id!,
          port: Number(addr!.split('@')[0]!.split(':')[1]),
          flags: flags!.split(','),
          master: master === '-' ? null : master!,
          connected: link === 'connected',
          owns: (slot: number) => ranges.some(([a, b]) => slot >= a && slot <= (b ?? a)),
        };
      });
  };
  /** Until every live node says the cluster is ok and sees `mastersWanted` reachable masters covering every slot. */
  const waitHealthy = async (timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(alive().map((n) => command(n.port, 'CLUSTER', 'INFO').then(String, () => '')));
      const ok = states.every((s) => /cluster_state:ok/.test(s) && new RegExp(`cluster_known_nodes:${nodes.length}\\b`).test(s));
      if (ok) {
        const top = await topology();
        const healthyMasters = top.filter((n) => n.flags.includes('master') && !n.flags.some((f) => f.startsWith('fail')));
        if (healthyMasters.length === masters) return top;
      }
      if (Date.now() > deadline) throw new Error(`the Redis Cluster was not healthy within ${timeoutMs} ms:\n${states.join('\n---\n')}`);
      await sleep(100);
    }
  };
  await waitHealthy();
  // A replica can take over only once it has copied its master: wait for every replication link.
  const linked = async () => {
    const infos = await Promise.all(nodes.map((n) => command(n.port, 'INFO', 'replication').then(String)));
    return infos.every((i) => /role:master/.test(i) || /master_link_status:up/.test(i));
  };
  for (const deadline = Date.now() + 20_000; !(await linked()); await sleep(100)) {
    if (Date.now() > deadline) throw new Error('the replicas of the Redis Cluster did not sync with their masters within 20 s');
  }

  return {
    dir,
    nodes,
    /** The setting naming the nodes, as an operator would write it. */
    nodesSetting: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    command,
    topology,
    waitHealthy,
    /** Until the live nodes mark the node on `port` failed and a replica serves its slots in its place. */
    async waitFailover(port: number, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const top = await topology().catch(() => null);
        if (top?.find((n) => n.port === port)?.flags.includes('fail')) return waitHealthy(Math.max(1000, deadline - Date.now()));
        if (Date.now() > deadline) throw new Error(`node ${port} was not failed over within ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    /** The slot of a key, as the cluster computes it (hash tags included). */
    keySlot: async (key: string) => Number(await command(alive()[0]!.port, 'CLUSTER', 'KEYSLOT', key)),
    /** The port of the master serving `slot` now. */
    async masterOf(slot: number): Promise<number> {
      const top = await topology();
      const m = top.find((n) => n.flags.includes('master') && !n.flags.some((f) => f.startsWith('fail')) && n.owns(slot));
      if (!m) throw new Error(`no master serves slot ${slot}`);
      return m.port;
    },
    /** SIGKILL: an abrupt loss of the node, as a crashed host. */
    async kill(port: number) {
      const n = nodes.find((x) => x.port === port)!;
      const exited = new Promise((r) => n.proc.once('exit', r));
      n.proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      killAll();
      await Promise.all(nodes.map((n) => (n.proc.exitCode === null && n.proc.signalCode === null ? new Promise((r) => n.proc.once('exit', r)) : null)));
      process.off('exit', killAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type RedisCluster = Awaited<ReturnType<typeof startRedisCluster>>;
