// The fraud rules benchmark (issue 27, point 4): what the hosted page adds to each card attempt
// (the rules, the block list probe, the velocity counts) and one "try a rule", on an account with
// BENCH_ROWS payments (default 1,000,000), against a primary-key read measured in the same run.
import { assessPayment, tryRule } from '../src/fraud/service.ts';
import type { Owner } from '../src/lib/owner.ts';
import { createAccountKey, environmentNote, fmtMs, fmtNum, fmtRatio, freshDatabase, say, table, verdict, writeSection, type BenchSettings } from './lib.ts';

/** The attempt's screening should stay a small part of a payment (a processor call is 300 ms and more). */
const TARGET_P95_MS = 10;
const CARDS = 50_000;
const ADDRESSES = 20_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Runs `once` back to back for `seconds`: latencies in ms, sorted. */
async function measure(seconds: number, once: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t0 = performance.now();
    await once(i);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

export async function run(settings: BenchSettings): Promise<void> {
  const db = await freshDatabase('fraud');
  try {
    const { accountId } = await createAccountKey(db.sql);
    const o: Owner = { accountId, livemode: false };
    const rows = settings.rows;
    say(`fraud: seeding ${fmtNum(rows)} payments (${fmtNum(CARDS)} cards, ${fmtNum(ADDRESSES)} addresses, over 7 days)`);
    const t0 = Date.now();
    // The search indexes (migration 0037: trigram, email, amount…) are not on this path and make
    // the seeding several times slower: dropped in this scratch database only.
    for (const index of ['payments_search_text', 'payments_search_email', 'payments_search_amount', 'payments_search_last4']) {
      await db.sql`drop index if exists ${db.sql(index)}`;
    }
    await db.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, email, card_fingerprint, card_country, client_ip, created_at)
      select 'pay_bench' || lpad(g::text, 20, '0'), ${accountId}, false, 'FAILED', 500 + (g % 20000), 'usd', 'payer' || (g % 100000) || '@example.com',
        'fp_' || (g % ${CARDS}), case when g % 10 = 0 then 'NG' else 'US' end,
        ('10.' || ((g % ${ADDRESSES}) / 250) || '.' || ((g % ${ADDRESSES}) % 250) || '.1')::inet,
        now() - make_interval(secs => (g::float8 / ${rows}) * 7 * 86400)
      from generate_series(1, ${rows}::bigint) g`;
    const rules: Array<[string, string, unknown[]]> = [
      ['Card testing by address', 'block', [{ attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 5 }]],
      ['Card testing by card', 'block', [{ attribute: 'card_attempts', window_seconds: 3600, operator: 'gte', value: 4 }]],
      ['Daily card velocity', 'review', [{ attribute: 'card_attempts', window_seconds: 86400, operator: 'gte', value: 10 }]],
      ['Large foreign', 'review', [{ attribute: 'amount_cents', operator: 'gte', value: 50000 }, { attribute: 'card_country', operator: 'not_in', values: ['US'] }]],
      ['Trusted domain', 'allow', [{ attribute: 'email_domain', operator: 'in', values: ['trusted.example'] }]],
    ];
    for (const [i, [name, action, conditions]] of rules.entries()) {
      await db.sql`insert into fraud_rules (id, account_id, livemode, name, action, conditions) values (${`frl_bench${String(i).padStart(20, '0')}`}, ${accountId}, false, ${name}, ${action}, ${db.sql.json(conditions as never)})`;
    }
    await db.sql`
      insert into fraud_list_items (id, account_id, livemode, kind, value, network)
      select 'fli_bench' || lpad(g::text, 20, '0'), ${accountId}, false, 'client_ip', '192.0.2.' || g || '/32', ('192.0.2.' || g || '/32')::cidr
      from generate_series(1, 200) g`;
    await db.sql`vacuum analyze payments`;
    await db.sql`vacuum analyze fraud_rules`;
    await db.sql`vacuum analyze fraud_list_items`;
    const seeded = Math.round((Date.now() - t0) / 1000);
    say(`fraud: seeded in ${seeded} s; measuring for ${settings.seconds} s each`);

    const facts = (i: number) => ({
      amount_cents: 1000 + (i % 90_000),
      currency: 'usd',
      email: `payer${i % 100_000}@example.com`,
      card_fingerprint: `fp_${(i * 7919) % CARDS}`,
      card_country: i % 10 === 0 ? 'NG' : 'US',
      client_ip: `10.${((i * 31) % ADDRESSES) / 250 | 0}.${((i * 31) % ADDRESSES) % 250}.1`,
    });
    const reference = await measure(settings.seconds, (i) => db.sql`select * from payments where id = ${'pay_bench' + String((i * 104_729) % rows + 1).padStart(20, '0')}`);
    const assess = await measure(settings.seconds, (i) => db.sql.begin((tx) => assessPayment(tx, o, facts(i))));
    const trialT0 = performance.now();
    const trial = await tryRule(db.sql, o, { action: 'block', conditions: [{ attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 5 }] });
    const trialMs = performance.now() - trialT0;

    const p95 = percentile(assess, 95);
    const md = `## Fraud rules (issue 27, point 4)

\`npm run bench -- fraud\`: ${fmtNum(rows)} payments in one account and mode (${fmtNum(CARDS)} cards, ${fmtNum(ADDRESSES)} client
addresses, over 7 days; seeded in ${seeded} s, without the search indexes), ${rules.length} enabled rules with three velocity windows, 200 block list
networks. One connection, calls back to back for ${settings.seconds} s each; the reference is a primary-key read of one payment
in the same run.

${table(
  ['What', 'calls', 'p50', 'p95', 'p99', 'p95 / reference'],
  [
    ['reference: `select * from payments where id = $1`', fmtNum(reference.length), fmtMs(percentile(reference, 50)), fmtMs(percentile(reference, 95)), fmtMs(percentile(reference, 99)), '1.00'],
    ['`assessPayment` (rules, list probe, 3 velocity counts) in a transaction', fmtNum(assess.length), fmtMs(percentile(assess, 50)), fmtMs(p95), fmtMs(percentile(assess, 99)), fmtRatio(p95, percentile(reference, 95))],
  ],
)}

Target: the screening's p95 under ${TARGET_P95_MS} ms: ${verdict(p95 < TARGET_P95_MS)}.

"Try a rule" (client_ip_attempts in 600 s >= 5) over the last 30 days: read ${fmtNum(trial.evaluated)} payments (capped at
20,000${trial.truncated ? ', reached' : ''}), matched ${fmtNum(trial.matched)}, in ${fmtMs(trialMs)}.

${await environmentNote(db.sql)}
`;
    await writeSection('fraud', md);
  } finally {
    await db.close();
  }
}
