import { html, type Html } from '../../pages/html.ts';
import type { WebhookEndpointStats } from '../../webhooks/presenter.ts';
import { barChart } from '../charts.ts';
import { table } from '../widgets.ts';

/**
 * The endpoint's delivery analytics (issue 26, point 5): the dashboard's bar chart (charts.ts) of the
 * last 24 hours (succeeded and failed attempts per hour, stacked) and, beside it, the same figures as
 * tables for screen readers and people.
 */

const OK = '#0b6b3a';
const BAD = '#b42318';

const pct = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(r === 1 ? 0 : 1)} %`);
const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
const hourText = (unixS: number) => new Date(unixS * 1000).toISOString().slice(11, 16);

export function deliveryChart(st: WebhookEndpointStats): Html {
  const first = st.hourly[0];
  const last = st.hourly[st.hourly.length - 1];
  const max = Math.max(0, ...st.hourly.map((h) => h.attempts));
  const svg = barChart({
    id: 'wh-chart',
    name: 'deliveries',
    title: 'Delivery attempts per hour, last 24 hours',
    desc: `${st.last_24_hours.attempts} attempts, ${st.last_24_hours.succeeded} succeeded (green) and ${st.last_24_hours.failed} failed (red); the busiest hour had ${max}. The tables beside give the figures.`,
    bars: st.hourly.map((h) => ({
      label: `${hourText(h.hour)} UTC: ${h.attempts} attempts, ${h.succeeded} succeeded`,
      segments: [
        { value: h.succeeded, fill: OK },
        { value: h.attempts - h.succeeded, fill: BAD },
      ],
    })),
    format: String,
    axis: [first ? hourText(first.hour) : '', last ? `${hourText(last.hour)} UTC` : ''],
  });
  const periods = table<[string, WebhookEndpointStats['last_24_hours']]>(
    [
      { label: 'Period', cell: ([name]) => name },
      { label: 'Attempts', cell: ([, p]) => String(p.attempts), num: true },
      { label: 'Succeeded', cell: ([, p]) => pct(p.success_rate), num: true },
      { label: 'Latency p50', cell: ([, p]) => ms(p.latency_p50_ms), num: true },
      { label: 'Latency p95', cell: ([, p]) => ms(p.latency_p95_ms), num: true },
    ],
    [
      ['Last 24 hours', st.last_24_hours],
      ['Last 30 days', st.last_30_days],
    ],
    null,
    '',
  );
  const hourly = table<WebhookEndpointStats['hourly'][number]>(
    [
      { label: 'Hour (UTC)', cell: (h) => hourText(h.hour) },
      { label: 'Attempts', cell: (h) => String(h.attempts), num: true },
      { label: 'Succeeded', cell: (h) => String(h.succeeded), num: true },
      { label: 'Failed', cell: (h) => String(h.attempts - h.succeeded), num: true },
    ],
    st.hourly.filter((h) => h.attempts > 0),
    null,
    'No attempts in the last 24 hours.',
  );
  return html`${svg}
<p class="wh-legend"><span class="muted">Green: succeeded · Red: failed.</span></p>
${periods}
<details><summary>Hour by hour (last 24 hours)</summary>${hourly}</details>`;
}
