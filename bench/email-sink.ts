// The SMTP sink of bench/email.ts, in a process of its own so that it competes equally with the
// service and with the bare nodemailer loop: smtp-server (no TLS, no login) accepting every message
// and discarding it. Its first line is `port <n>`; then, every 50 ms while messages arrive, a line
// `count <messages accepted so far>`.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

let accepted = 0;
let reported = 0;
setInterval(() => {
  if (accepted !== reported) {
    reported = accepted;
    process.stdout.write(`count ${accepted}\n`);
  }
}, 50).unref();

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  disableReverseLookup: true, // no DNS round trip per connection: the sink costs as little as it can
  logger: false,
  // Up to the service pool's connections and the reference's at once: no limit of the sink's own.
  maxClients: 1000,
  onData(stream, _session, cb) {
    stream.on('data', () => {});
    stream.on('end', () => {
      accepted++;
      cb();
    });
  },
});
server.on('error', (err) => process.stderr.write(`email sink: ${err.message}\n`));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${(server.server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  process.stdout.write(`count ${accepted}\n`);
  process.exit(0);
});
