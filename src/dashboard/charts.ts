import { escapeHtml, html, raw, type Html } from '../pages/html.ts';

/**
 * The dashboard's one chart (issues 26 and 27): server-rendered SVG bars, stacked when a bar has
 * several segments, with presentation attributes only (no style attribute, no script), so the
 * strict CSP holds and nothing is fetched. Each bar carries a <title> (its figures on hover and for
 * assistive technology) and the chart a title and description; the pages put the same numbers in
 * a table beside it. Used by Home (daily volume), a webhook endpoint's deliveries and Reports.
 */

export interface BarSegment {
  value: number;
  fill: string;
}

export interface Bar {
  /** What the bar shows, in words: its <title>. */
  label: string;
  /** Stacked bottom up. All of one sign: a negative bar hangs below the zero line. */
  segments: BarSegment[];
  /** data-* attributes of the bar's first segment (tests and scripts read the figures there). */
  data?: Record<string, string | number>;
}

export interface BarChartSpec {
  /** Unique within the page: the ids of the title and description derive from it. */
  id: string;
  /** data-chart attribute of the svg. */
  name?: string;
  title: string;
  desc?: string;
  bars: readonly Bar[];
  /** The scale's labels (the highest bar, the lowest when below zero). */
  format: (v: number) => string;
  /** Under the chart: the first and last bars' names. */
  axis?: readonly [string, string];
}

const W = 720;
const H = 180;
const TOP = 4;
const GAP_RATIO = 0.2;
const AXIS = '#9ca3af';

const f1 = (n: number) => n.toFixed(1);
const total = (b: Bar) => b.segments.reduce((a, s) => a + s.value, 0);

export function barChart(c: BarChartSpec): Html {
  const totals = c.bars.map(total);
  const max = Math.max(0, ...totals);
  const min = Math.min(0, ...totals);
  const span = max - min || 1;
  const plot = H - TOP;
  const zeroY = TOP + (max / span) * plot;
  const slot = W / Math.max(1, c.bars.length);
  const barW = Math.max(1, slot * (1 - GAP_RATIO));
  // Built as one string (a reports page draws some six hundred bars): the numbers need no escaping,
  // the labels and data values are escaped as the html tag would.
  const data = (d: Bar['data']) => {
    let out = '';
    if (d) for (const [k, v] of Object.entries(d)) out += ` data-${k}="${typeof v === 'number' ? v : escapeHtml(v)}"`;
    return out;
  };
  const w = f1(barW);
  let drawn = '';
  c.bars.forEach((b, i) => {
    const x = f1(i * slot + (slot - barW) / 2);
    let up = zeroY;
    let down = zeroY;
    drawn += `<g><title>${escapeHtml(b.label)}</title>`;
    b.segments.forEach((s, j) => {
      const h = (Math.abs(s.value) / span) * plot;
      const y = s.value >= 0 ? (up -= h) : ((down += h), down - h);
      drawn += `<rect x="${x}" y="${f1(y)}" width="${w}" height="${f1(h)}" fill="${escapeHtml(s.fill)}"${j === 0 ? data(b.data) : ''}></rect>`;
    });
    drawn += '</g>';
  });
  const bars = raw(drawn);
  const titleId = `${c.id}-title`;
  const descId = `${c.id}-desc`;
  // The scale is HTML beside the drawing, so it stays readable when a phone shrinks the SVG.
  const scale = html`<div class="axis scale" aria-hidden="true"><span>${min < 0 ? `Lowest ${c.format(min)}` : ''}</span><span>Highest ${c.format(max)}</span></div>`;
  return html`<div class="chart">${scale}<svg viewBox="0 0 ${W} ${H + 2}" width="100%" role="img" focusable="false" aria-labelledby="${titleId}${c.desc ? ` ${descId}` : ''}"${c.name ? raw(` data-chart="${c.name}"`) : ''}>
<title id="${titleId}">${c.title}</title>${c.desc ? html`<desc id="${descId}">${c.desc}</desc>` : ''}
${bars}
<line x1="0" y1="${f1(zeroY)}" x2="${W}" y2="${f1(zeroY)}" stroke="${AXIS}" stroke-width="1"></line>
</svg>${c.axis ? html`<div class="axis" aria-hidden="true"><span>${c.axis[0]}</span><span>${c.axis[1]}</span></div>` : ''}</div>`;
}
