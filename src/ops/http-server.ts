import http, { type RequestListener, type ServerResponse } from 'node:http';
import net from 'node:net';
import { StartupError } from '../lib/dependencies.ts';

export interface DrainPlan {
  /** Connections with no request in progress are closed this long after the drain begins. */
  idleGraceMs: number;
  /** Connections still open this long after the drain begins are destroyed, answered or not. */
  forceAfterMs: number;
}

export interface GracefulServer {
  server: http.Server;
  /**
   * Stops accepting connections; every request in flight, and every request that still arrives on
   * an open connection, is answered with `Connection: close`; connections with nothing to answer are
   * closed after `idleGraceMs`. Resolves when no connection is left, with how many were cut.
   */
  drain(plan: DrainPlan): Promise<{ cut: number }>;
}

/** The one line a process prints when it cannot take its port. */
export function listenFailure(port: number, err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRINUSE') return `port ${port} is already in use (EADDRINUSE): stop the process that holds it or set PORT to a free port.`;
  if (err.code === 'EACCES') return `no permission to listen on port ${port} (EACCES): use a port above 1023 or set PORT.`;
  return `cannot listen on port ${port} (${err.code ?? 'error'}): ${err.message}`;
}

/** An HTTP server on `port` that can be drained; rejects with a StartupError when the port cannot be taken. */
export async function listenGracefully(handler: RequestListener, port: number): Promise<GracefulServer> {
  // A request without a body (no Content-Length, no Transfer-Encoding: a GET) is not made a stream
  // that emits 'data', 'end' and 'close': Node marks it read at once (nothing here reads such a body).
  const server = http.createServer({ optimizeEmptyRequests: true });
  // Responses in progress on each open connection (usually one; more when a client pipelines).
  const open = new Map<net.Socket, Set<ServerResponse>>();
  let draining = false;

  const closeGently = (socket: net.Socket) => {
    if (!socket.destroyed) socket.end(() => socket.destroy());
  };

  server.on('connection', (socket: net.Socket) => {
    open.set(socket, new Set());
    socket.once('close', () => open.delete(socket));
  });
  // Every request is seen here first, then handed to the application (one listener: no array of them to copy per request).
  server.on('request', (req, res) => {
    const socket = req.socket;
    const inProgress = open.get(socket);
    if (inProgress) {
      inProgress.add(res);
      if (draining) res.setHeader('Connection', 'close');
      // A response closes once.
      res.on('close', () => {
        inProgress.delete(res);
        // Its headers went out before the drain began (they said keep-alive): nothing more will come.
        if (draining && inProgress.size === 0) closeGently(socket);
      });
    }
    handler(req, res);
  });

  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(new StartupError(listenFailure(port, err)));
    server.once('error', failed);
    server.listen(port, () => {
      server.off('error', failed);
      resolve();
    });
  });

  return {
    server,
    drain(plan) {
      draining = true;
      // http.Server#close also runs closeIdleConnections(), which resets a kept-alive connection
      // whose next request is already on the wire. net.Server#close only stops accepting; the idle
      // connections are closed below, after a grace as long as the keep-alive promise clients rely on.
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      for (const responses of open.values()) {
        for (const res of responses) if (!res.headersSent) res.setHeader('Connection', 'close');
      }
      const idle = setTimeout(() => {
        for (const [socket, responses] of open) if (responses.size === 0) closeGently(socket);
      }, plan.idleGraceMs);
      let cut = 0;
      const force = setTimeout(() => {
        for (const [socket, responses] of open) {
          if (responses.size > 0) cut++;
          socket.destroy();
        }
      }, plan.forceAfterMs);
      return closed.then(() => {
        clearTimeout(idle);
        clearTimeout(force);
        return { cut };
      });
    },
  };
}
