import { formatAmount } from '../../lib/currency.ts';
import { html, type Html } from '../../pages/html.ts';
import type { HomeNumbers } from './store.ts';

const volumeList = (rows: HomeNumbers['today']) =>
  rows.length
    ? html`<ul class="stat-list">${rows.map((r) => html`<li class="stat" data-currency="${r.currency}">${formatAmount(r.amount_cents, r.currency)}</li>`)}</ul>`
    : html`<p class="stat">0</p>`;

/** A bar per day of the 30, scaled to the largest day; each bar names its day and amount. */
export function volumeChart(n: HomeNumbers): Html {
  if (!n.chartCurrency) return html`<p class="muted">No succeeded payments in the last 30 days.</p>`;
  const W = 600;
  const H = 160;
  const gap = 4;
  const bar = (W - gap * 29) / 30;
  const max = Math.max(...n.days.map((d) => d.amount_cents), 1);
  const cur = n.chartCurrency;
  const total = n.days.reduce((a, d) => a + d.amount_cents, 0);
  return html`<div class="chart">
<svg viewBox="0 0 ${W} ${H + 2}" role="img" aria-labelledby="chart-title" focusable="false">
<title id="chart-title">Daily volume in ${cur.toUpperCase()} over the last 30 days, ${formatAmount(total, cur)} in all</title>
<line x1="0" y1="${H + 1}" x2="${W}" y2="${H + 1}" stroke="#c9ced8" stroke-width="1"/>
${n.days.map((d, i) => {
    const h = d.amount_cents ? Math.max(2, Math.round((d.amount_cents / max) * H)) : 0;
    return html`<rect x="${(i * (bar + gap)).toFixed(1)}" y="${H - h}" width="${bar.toFixed(1)}" height="${h}" rx="2" fill="#5046e5" data-day="${d.day}" data-amount="${d.amount_cents}"><title>${d.day}: ${formatAmount(d.amount_cents, cur)}</title></rect>`;
  })}
</svg>
<div class="axis" aria-hidden="true"><span>${n.days[0]!.day}</span><span>${n.days.at(-1)!.day}</span></div>
</div>`;
}

export function homeBody(n: HomeNumbers): Html {
  return html`<div class="grid">
<section class="card" aria-labelledby="h-today" data-stat="today"><h2 id="h-today" class="stat-label">Volume today (UTC)</h2>${volumeList(n.today)}</section>
<section class="card" aria-labelledby="h-30" data-stat="last30"><h2 id="h-30" class="stat-label">Volume, last 30 days</h2>${volumeList(n.last30)}</section>
<section class="card" aria-labelledby="h-ok" data-stat="succeeded"><h2 id="h-ok" class="stat-label"><a href="/dashboard/payments?status=SUCCEEDED">Succeeded payments, 30 days</a></h2><p class="stat">${n.succeeded30}</p></section>
<section class="card" aria-labelledby="h-failed" data-stat="failed"><h2 id="h-failed" class="stat-label"><a href="/dashboard/payments?status=FAILED">Failed payments, 30 days</a></h2><p class="stat">${n.failed30}</p></section>
</div>
<section class="card" aria-labelledby="h-chart"><h2 id="h-chart">Daily volume${n.chartCurrency ? ` (${n.chartCurrency.toUpperCase()})` : ''}</h2>${volumeChart(n)}</section>`;
}
