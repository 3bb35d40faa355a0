import { describe, expect, it } from 'vitest';
import { loadConfig, parseClusterNodes } from '../../src/config.ts';
import { QUEUE_NAMES, queuePrefix } from '../../src/queue/queues.ts';

describe('Redis settings', () => {
  it('when REDIS_CLUSTER_NODES is unset, then the service uses REDIS_URL, as before, and no cluster', () => {
    const c = loadConfig({ REDIS_URL: 'redis://10.0.0.5:6380' });
    expect({ url: c.redisUrl, cluster: c.redisCluster, set: c.localServices.redisUrlSet }).toEqual({ url: 'redis://10.0.0.5:6380', cluster: null, set: true });
  });

  it('when REDIS_CLUSTER_NODES names nodes, then they are the cluster, the first entry gives the login and TLS for all, and nothing is embedded', () => {
    const c = loadConfig({ REDIS_CLUSTER_NODES: 'rediss://ops:s%40cret@redis-a.internal:7000, redis-b.internal:7001,[::1]:7002' });
    expect(c.redisCluster).toEqual({
      nodes: [
        { host: 'redis-a.internal', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      username: 'ops',
      password: 's@cret',
      tls: true,
    });
    expect(c.localServices.redisUrlSet).toBe(true);
    expect(parseClusterNodes('127.0.0.1:7000')).toEqual({ nodes: [{ host: '127.0.0.1', port: 7000 }], tls: false });
  });

  it('when REDIS_URL is set but empty, then it counts as unset (the cluster test server clears it this way)', () => {
    expect(loadConfig({ REDIS_URL: '', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).redisCluster?.nodes).toEqual([{ host: '127.0.0.1', port: 7000 }]);
  });

  it.each([
    [{ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, /REDIS_CLUSTER_NODES: set REDIS_URL \(one Redis\) or REDIS_CLUSTER_NODES \(a Redis Cluster\), not both/],
    [{ REDIS_CLUSTER_NODES: ' , ' }, /REDIS_CLUSTER_NODES: must name at least one node/],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1' }, /REDIS_CLUSTER_NODES: entry 1 must be host:port/],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000,redis://10.0.0.1:7001/2' }, /REDIS_CLUSTER_NODES: entry 2 must be host:port, with a port and no database number/],
    [{ REDIS_CLUSTER_NODES: 'http://10.0.0.1:7000' }, /REDIS_CLUSTER_NODES: entry 1: only redis:\/\/ and rediss:\/\/ are understood/],
  ])('when the Redis settings are %j, then start-up fails with one line naming the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('when an entry with a password is malformed, then the message does not repeat the password', () => {
    let message = '';
    try {
      loadConfig({ REDIS_CLUSTER_NODES: 'redis://ops:hunter2@10.0.0.1' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/entry 1 must be host:port/);
    expect(message).not.toContain('hunter2');
  });

  it('when REDIS_PREFIX has braces, then it is refused: the service adds each queue\'s hash tag itself', () => {
    expect(() => loadConfig({ REDIS_PREFIX: '{payments}' })).toThrow(/REDIS_PREFIX/);
  });

  it('when the queues run on one Redis, then their prefix is REDIS_PREFIX unchanged; on a cluster each queue has its own hash tag', () => {
    expect(queuePrefix('payments', QUEUE_NAMES.webhookDelivery, false)).toBe('payments');
    expect(Object.values(QUEUE_NAMES).map((q) => queuePrefix('payments', q, true))).toEqual(Object.values(QUEUE_NAMES).map((q) => `payments:{${q}}`));
  });
});
