import { Worker } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { reconcileEmails } from '../../src/email/send.ts';
import { workerConnection } from '../../src/queue/redis.ts';
import { emailWorker } from '../../workers/email.ts';
import { startWorkers } from '../../workers/index.ts';
import { Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createSession } from '../helpers/factories.ts';

// Redis only carries the work: an email whose job is lost (keys deleted under this file's prefix,
// as a flush would) is enqueued again by the repair pass; a job whose worker died mid-way runs
// again on another worker once its lock expires. Either way the message arrives once.

const smtp = useSmtp();
// No worker at start: each test decides when one runs. A short lock, so a dead worker's job is taken over quickly.
const t = useTestServer(() => ({ env: { SMTP_URL: smtp.url, WORKER_LOCK_MS: '1000' } }));

let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

/** Pays a session: its receipt row is PENDING with a job waiting (no email worker runs yet). */
async function receiptOfNewPayment(email: string): Promise<string> {
  const cs = await createSession(t, key, { amount: 1200 });
  expect((await new Payer(t).pay(cs.id, { email })).status).toBe(303);
  const [row] = await t.sql`select e.id, e.status from emails e join payments p on p.id = e.related_object where p.checkout_session_id = ${cs.id}`;
  expect(row).toMatchObject({ status: 'PENDING' });
  return row!.id as string;
}

const emailQueue = () => t.s.queues.get('email');
const status = async (id: string) => (await t.sql`select status, attempts from emails where id = ${id}`)[0]!;

describe('an email whose job Redis lost', () => {
  it('when the job is gone, then the repair pass enqueues it again (once), and the email arrives once', async () => {
    const id = await receiptOfNewPayment('lost@example.com');
    expect(await emailQueue().getJobState(id)).toBe('waiting');
    // A young email is left to its after-commit enqueue; an old one with a live job is left too.
    expect(await reconcileEmails(t.s)).toBe(0);
    await t.sql`update emails set created_at = now() - interval '1 minute' where id = ${id}`;
    expect(await reconcileEmails(t.s)).toBe(0);

    // Redis loses the queue: every key of the email queue under this file's prefix.
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:email:*`);
    expect(keys.length).toBeGreaterThan(0);
    await t.s.redis.del(...keys);
    expect(await emailQueue().getJobState(id)).toBe('unknown');

    expect(await reconcileEmails(t.s)).toBe(1);
    expect(await emailQueue().getJobState(id)).toBe('waiting');
    expect(await reconcileEmails(t.s)).toBe(0); // the job is live again: not enqueued twice

    const running = await startWorkers(t.s, [emailWorker]);
    try {
      await smtp.waitFor((m) => m.emailId === id);
      await eventually(async () => (await status(id)).status === 'SENT');
      expect(await status(id)).toEqual({ status: 'SENT', attempts: 1 });
      expect(await reconcileEmails(t.s)).toBe(0);
      expect(smtp.received.filter((m) => m.emailId === id)).toHaveLength(1);
    } finally {
      await running.close();
    }
  });
});

describe('a worker that dies mid-way', () => {
  it('when the worker holding the job stops answering, then after its lock expires another worker sends the email, once', async () => {
    const id = await receiptOfNewPayment('crash@example.com');
    // A worker that takes the job, counts an attempt as ours does, and then dies before the message
    // leaves: it never finishes nor renews its lock (closed by force, its connection dropped).
    const connection = workerConnection(t.s.redis);
    let taken = false;
    const doomed = new Worker(
      'email',
      async (job) => {
        await t.sql`update emails set attempts = attempts + 1 where id = ${job.id!}`;
        taken = true;
        await new Promise(() => {});
      },
      { connection, prefix: t.s.config.redisPrefix, lockDuration: 1000, stalledInterval: 60_000 },
    );
    doomed.on('error', () => {});
    await eventually(async () => taken);
    expect(await emailQueue().getJobState(id)).toBe('active');
    void doomed.close(true);
    connection.disconnect();

    const running = await startWorkers(t.s, [emailWorker]);
    try {
      // The lock runs out after 1 s and the stalled check runs every second; a loaded machine (the
      // full suite on 2 cores) has taken more than 10 s for it: 20 s allowed.
      await smtp.waitFor((m) => m.emailId === id, 20_000);
      await eventually(async () => (await status(id)).status === 'SENT', 20_000);
      expect(await status(id)).toEqual({ status: 'SENT', attempts: 2 });
      expect(smtp.received.filter((m) => m.emailId === id)).toHaveLength(1);
    } finally {
      await running.close();
    }
  }, 60_000);
});
