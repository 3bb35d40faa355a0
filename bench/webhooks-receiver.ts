// The local webhook receiver of bench/webhooks.ts, in a process of its own so that it competes
// equally with the service and with the bare got loop. It answers 200 to every POST and prints one
// line per request: `<Service-Event-Id or -> <arrival time, ms since the epoch>`; its first line is
// `port <n>`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let pending = '';
const flush = () => {
  if (pending) process.stdout.write(pending);
  pending = '';
};
setInterval(flush, 5).unref();

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    pending += `${req.headers['service-event-id'] ?? '-'} ${at.toFixed(3)}\n`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  flush();
  process.exit(0);
});
