import type { AccountBranding } from '../../auth/keys.ts';
import { html, type Html } from '../../pages/html.ts';
import { contrastRatio, textColorOn } from '../../pages/layout.ts';
import type { ShellPage } from '../layout.ts';
import { card, checkbox, formError, input, type FormState, type Forms } from '../widgets.ts';

export const SETTINGS_PATH = '/dashboard/settings';
/** The hosted pages' button colour when the account has none (PAGE_CSS's .btn). */
export const DEFAULT_BRAND_COLOR = '#635bff';

export const SETTINGS_FIELDS = ['business_name', 'support_email', 'brand_color', 'logo_url'] as const;

/** The form as the account's settings stand (an unset colour shows the default, with "no brand colour" ticked). */
export const settingsValues = (b: AccountBranding): Record<string, string> => ({
  business_name: b.business_name ?? '',
  support_email: b.support_email ?? '',
  brand_color: b.brand_color ?? DEFAULT_BRAND_COLOR,
  brand_color_default: b.brand_color ? '' : 'on',
  logo_url: b.logo_url ?? '',
});

/**
 * A sample of the hosted pages' Pay button in the brand colour, with the text colour the pages
 * pick for it. An inline SVG painted by attributes, so the page needs no style of its own (the
 * dashboard's CSP allows only its one stylesheet).
 */
function sampleButton(color: string): Html {
  const text = textColorOn(color);
  return html`<svg class="brand-sample" role="img" aria-label="Sample Pay button: ${text === '#ffffff' ? 'white' : 'black'} text on ${color}" width="240" height="48" viewBox="0 0 240 48" xmlns="http://www.w3.org/2000/svg">
<rect width="240" height="48" rx="8" fill="${color}"/>
<text x="120" y="30" text-anchor="middle" font-family="system-ui,-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif" font-size="17" font-weight="600" fill="${text}">Pay $19.99</text>
</svg>`;
}

/** What payers see: the name, the logo (its origin allowed in this page's CSP only) and the button. */
function preview(b: AccountBranding): Html {
  const color = b.brand_color ?? DEFAULT_BRAND_COLOR;
  const text = textColorOn(color);
  return card(
    'Preview',
    html`<p class="muted">As payers see the top of your hosted pages and their Pay button (saved settings).</p>
<div class="brand-preview" data-brand-preview>
${b.logo_url ? html`<img src="${b.logo_url}" alt="${b.business_name ?? 'Your logo'}" data-logo>` : ''}
${b.business_name ? html`<strong data-brand-name>${b.business_name}</strong>` : html`<span class="muted">No business name set</span>`}
</div>
${sampleButton(color)}
<p class="muted">Button ${b.brand_color ? html`<span class="mono">${color}</span>` : html`in the default colour (<span class="mono">${color}</span>)`} with ${text === '#ffffff' ? 'white' : 'black'} text: contrast ${contrastRatio(color, text).toFixed(1)}:1 (at least 4.5:1 is easy to read).</p>`,
  );
}

/**
 * Test mode shows the settings without a form: they are shared by both modes and change what live
 * customers see, so only live mode changes them (issue 21; the server refuses a test-mode save too).
 */
function readOnly(saved: AccountBranding, state: FormState, f: Forms): Html {
  const row = (label: string, value: string | null, mono = false) =>
    html`<dt>${label}</dt><dd>${value ? (mono ? html`<span class="mono">${value}</span>` : value) : html`<span class="muted">Not set</span>`}</dd>`;
  return card(
    'Business and branding',
    html`${formError(state, [])}<div class="alert info" role="note">You are viewing <strong>test data</strong>. These settings change what your <strong>live</strong> customers see, so they can be changed in live mode only.</div>
<div class="field"><dl class="facts">${row('Business name', saved.business_name)}${row('Support email', saved.support_email)}${row('Brand colour', saved.brand_color, true)}${row('Logo URL', saved.logo_url, true)}</dl></div>
<form class="inline" method="post" action="/dashboard/mode">
<input type="hidden" name="_csrf" value="${f.csrf}"><input type="hidden" name="mode" value="live"><input type="hidden" name="back" value="${SETTINGS_PATH}">
<button type="submit" class="primary">Switch to live data to change them</button>
</form>`,
  );
}

export function settingsPage(saved: AccountBranding, state: FormState, f: Forms, notice: Html): ShellPage {
  return {
    section: 'settings',
    title: 'Settings',
    body: html`${notice}<div class="alert info" role="note">These settings are shared by <strong>test and live</strong> mode. Payers see them on your hosted checkout, payment link and invoice pages and in the emails sent to them (receipts, refund notices, invoices, reminders, invitations); your support email is where their replies go.</div>
<div class="columns">${f.livemode
      ? card(
          'Business and branding',
          html`${formError(state, SETTINGS_FIELDS)}
<form method="post" action="${SETTINGS_PATH}" novalidate>
${f.hidden()}
${input({ name: 'business_name', label: 'Business name', hint: 'The heading of your hosted pages and the sender name of your emails. Up to 100 characters. Empty: none.', state, attrs: html`maxlength="200" autocomplete="organization"` })}
${input({ name: 'support_email', label: 'Support email', type: 'email', hint: 'The Reply-To of your emails. Empty: replies go nowhere special.', state, attrs: html`maxlength="300" autocomplete="email"` })}
${input({ name: 'brand_color', label: 'Brand colour', type: 'color', hint: 'The colour of the Pay buttons; the text on them is white or black, whichever is easier to read.', state })}
${checkbox('brand_color_default', 'No brand colour: use the default', state)}
${input({ name: 'logo_url', label: 'Logo URL', type: 'url', hint: 'An https address of an image (PNG, SVG, JPEG), shown up to 40 pixels high. Empty: no logo.', state, attrs: html`maxlength="2100" placeholder="https://example.com/logo.png"` })}
<div class="form-actions"><button type="submit" class="primary">Save settings</button></div>
</form>`,
        )
      : readOnly(saved, state, f)}${preview(saved)}</div>`,
  };
}
