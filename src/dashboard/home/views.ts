import { formatAmount } from '../../lib/currency.ts';
import { html, type Html } from '../../pages/html.ts';
import { barChart } from '../charts.ts';
import type { HomeNumbers } from './store.ts';

const volumeList = (rows: HomeNumbers['today']) =>
  rows.length
    ? html`<ul class="stat-list">${rows.map((r) => html`<li class="stat" data-currency="${r.currency}">${formatAmount(r.amount_cents, r.currency)}</li>`)}</ul>`
    : html`<p class="stat">0</p>`;

/** A bar per day of the 30, scaled to the largest day; each bar names its day and amount. */
export function volumeChart(n: HomeNumbers): Html {
  if (!n.chartCurrency) return html`<p class="muted">No succeeded payments in the last 30 days.</p>`;
  const cur = n.chartCurrency;
  const total = n.days.reduce((a, d) => a + d.amount_cents, 0);
  return barChart({
    id: 'chart',
    title: `Daily gross volume in ${cur.toUpperCase()} over the last 30 days, ${formatAmount(total, cur)} in all`,
    bars: n.days.map((d) => ({
      label: `${d.day}: ${formatAmount(d.amount_cents, cur)}`,
      segments: [{ value: d.amount_cents, fill: '#5046e5' }],
      data: { day: d.day, amount: d.amount_cents },
    })),
    format: (v) => formatAmount(v, cur),
    axis: [n.days[0]!.day, n.days.at(-1)!.day],
  });
}

/** What the volumes count: succeeded payments as charged, refunds not taken off (issue 22). */
const GROSS = html`<p class="hint">Succeeded payments, before refunds.</p>`;

export function homeBody(n: HomeNumbers): Html {
  return html`<div class="grid">
<section class="card" aria-labelledby="h-today" data-stat="today"><h2 id="h-today" class="stat-label">Gross volume today (UTC)</h2>${volumeList(n.today)}${GROSS}</section>
<section class="card" aria-labelledby="h-30" data-stat="last30"><h2 id="h-30" class="stat-label">Gross volume, last 30 days</h2>${volumeList(n.last30)}${GROSS}</section>
<section class="card" aria-labelledby="h-ok" data-stat="succeeded"><h2 id="h-ok" class="stat-label"><a href="/dashboard/payments?status=SUCCEEDED">Succeeded payments, 30 days</a></h2><p class="stat">${n.succeeded30}</p></section>
<section class="card" aria-labelledby="h-failed" data-stat="failed"><h2 id="h-failed" class="stat-label"><a href="/dashboard/payments?status=FAILED">Failed payments, 30 days</a></h2><p class="stat">${n.failed30}</p></section>
</div>
<section class="card" aria-labelledby="h-chart"><h2 id="h-chart">Daily gross volume${n.chartCurrency ? ` (${n.chartCurrency.toUpperCase()})` : ''}</h2>${volumeChart(n)}</section>`;
}
