import net, { type AddressInfo } from 'node:net';

/** A TCP proxy to the local Postgres that can be cut: connections refused and open ones reset. */
export async function postgresProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const up = async () => {
    if (server?.listening) return;
    server = net.createServer((client) => {
      const upstream = net.connect(target);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  };
  const down = async () => {
    const closed = new Promise((r) => server?.close(r));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await up();
  return { port: () => port, up, down };
}
