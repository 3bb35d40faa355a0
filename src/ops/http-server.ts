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

/**
 * The response a connection is answering now, as Node's HTTP server records it on the socket
 * (`socket._httpMessage`: from the request's arrival until its answer is sent, then the next
 * pipelined request's); null when it answers nothing. Not in Node's types; graceful-shutdown
 * libraries (http-terminator) and Node's own closeIdleConnections read the same field.
 */
const answering = (socket: net.Socket): ServerResponse | null => (socket as net.Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;

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
  // Open connections. What each is answering is Node's own record, the socket's current response
  // (`_httpMessage`, set from the request until its answer is sent, then the next pipelined one's):
  // nothing is kept per request (issue 28: a Set entry and a close listener per request cost GETs
  // about 6 % of their rate here; decisions.md).
  const open = new Set<net.Socket>();
  let draining = false;

  const closeGently = (socket: net.Socket) => {
    if (!socket.destroyed) socket.end(() => socket.destroy());
  };
  /** Closes the socket once it has nothing more to answer: after `res`, and after each response pipelined behind it. */
  const closeAfter = (socket: net.Socket, res: ServerResponse) => {
    res.once('close', () => {
      const next = answering(socket);
      if (!next || next === res) return closeGently(socket);
      if (!next.headersSent) next.setHeader('Connection', 'close');
      closeAfter(socket, next);
    });
  };

  server.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  // Every request is seen here first, then handed to the application (one listener: no array of them to copy per request).
  server.on('request', (req, res) => {
    // During the drain Node closes the connection after an answer that says `Connection: close`.
    if (draining) res.setHeader('Connection', 'close');
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
      for (const socket of open) {
        const res = answering(socket);
        if (!res) continue;
        // Not sent yet: the answer says the connection closes, and Node closes it after. Sent (it said
        // keep-alive): closed once it and whatever is pipelined behind it are answered.
        if (!res.headersSent) res.setHeader('Connection', 'close');
        else closeAfter(socket, res);
      }
      const idle = setTimeout(() => {
        for (const socket of open) if (!answering(socket)) closeGently(socket);
      }, plan.idleGraceMs);
      let cut = 0;
      const force = setTimeout(() => {
        for (const socket of open) {
          if (answering(socket)) cut++;
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
