import type { Db } from '../../db/sql.ts';
import type { Owner } from '../../lib/owner.ts';

export interface CurrencyVolume {
  currency: string;
  amount_cents: number;
}

export interface DayVolume {
  /** YYYY-MM-DD, UTC. */
  day: string;
  amount_cents: number;
}

export interface HomeNumbers {
  today: CurrencyVolume[];
  last30: CurrencyVolume[];
  succeeded30: number;
  failed30: number;
  /** The chart's currency (the largest volume of the 30 days), null when nothing succeeded. */
  chartCurrency: string | null;
  /** 30 days, oldest first, today last; days without payments are 0. */
  days: DayVolume[];
}

/**
 * The Home page's numbers for one account in one mode. Days are UTC days: "today" is since
 * midnight UTC, the 30 days are today and the 29 before it.
 */
export async function homeNumbers(sql: Db, owner: Owner): Promise<HomeNumbers> {
  const since = sql`date_trunc('day', now() at time zone 'utc') at time zone 'utc' - interval '29 days'`;
  const today = sql`date_trunc('day', now() at time zone 'utc') at time zone 'utc'`;
  const volumes = (from: typeof since) => sql<{ currency: string; amount_cents: string }[]>`
    select currency, sum(amount_cents)::text as amount_cents from payments
    where account_id = ${owner.accountId} and livemode = ${owner.livemode} and status = 'SUCCEEDED' and succeeded_at >= ${from}
    group by currency order by sum(amount_cents) desc, currency`;
  const [todayRows, lastRows, [counts]] = await Promise.all([
    volumes(today),
    volumes(since),
    sql<{ succeeded: number; failed: number }[]>`
      select
        count(*) filter (where status = 'SUCCEEDED' and succeeded_at >= ${since})::int as succeeded,
        count(*) filter (where status = 'FAILED' and failed_at >= ${since})::int as failed
      from payments
      where account_id = ${owner.accountId} and livemode = ${owner.livemode}
        and (succeeded_at >= ${since} or failed_at >= ${since})`,
  ]);
  const toVolume = (r: { currency: string; amount_cents: string }) => ({ currency: r.currency, amount_cents: Number(r.amount_cents) });
  const last30 = lastRows.map(toVolume);
  const chartCurrency = last30[0]?.currency ?? null;
  const byDay = new Map<string, number>();
  if (chartCurrency) {
    const rows = await sql<{ day: string; amount_cents: string }[]>`
      select to_char(date_trunc('day', succeeded_at at time zone 'utc'), 'YYYY-MM-DD') as day, sum(amount_cents)::text as amount_cents
      from payments
      where account_id = ${owner.accountId} and livemode = ${owner.livemode} and status = 'SUCCEEDED'
        and currency = ${chartCurrency} and succeeded_at >= ${since}
      group by 1`;
    for (const r of rows) byDay.set(r.day, Number(r.amount_cents));
  }
  const days: DayVolume[] = [];
  const midnight = new Date();
  midnight.setUTCHours(0, 0, 0, 0);
  for (let i = 29; i >= 0; i--) {
    const day = new Date(midnight.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    days.push({ day, amount_cents: byDay.get(day) ?? 0 });
  }
  return { today: todayRows.map(toVolume), last30, succeeded30: counts?.succeeded ?? 0, failed30: counts?.failed ?? 0, chartCurrency, days };
}
