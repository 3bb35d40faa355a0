import { type BrandableEmail, dateTimeText, rendered } from './layout.ts';

/** The endpoint an operational email is about (issue 26): the facts a merchant's operator acts on. */
export interface EndpointHealthEmailData {
  merchantName: string | null;
  livemode: boolean;
  url: string;
  endpointId: string;
  failingSince: Date;
  failedAttempts: number;
  /** When it will be (warning) or was (disabled) disabled. */
  disabledAt: Date;
  /** The endpoint's page on the dashboard. */
  dashboardUrl: string;
}

const modeText = (livemode: boolean) => (livemode ? 'live' : 'test');

/** A day (or a fifth of a shortened window) before the endpoint is disabled. */
export function endpointFailingEmail(d: EndpointHealthEmailData): BrandableEmail {
  return endpointHealthEmail(
    d,
    `Your ${modeText(d.livemode)} webhook endpoint will be disabled`,
    `Every delivery to ${d.url} has failed since ${dateTimeText(d.failingSince)}. Unless one succeeds, the endpoint is disabled at ${dateTimeText(d.disabledAt)}: its events are then held, none is lost, and they are sent when you enable it again.`,
    'See its deliveries',
  );
}

/** The endpoint was disabled for its failures. */
export function endpointDisabledEmail(d: EndpointHealthEmailData): BrandableEmail {
  return endpointHealthEmail(
    d,
    `Your ${modeText(d.livemode)} webhook endpoint was disabled`,
    `Every delivery to ${d.url} failed from ${dateTimeText(d.failingSince)} to ${dateTimeText(d.disabledAt)}, so the endpoint was disabled. Its events are held, none is lost: fix the receiver, then enable the endpoint again (Resume on the dashboard, or is_active: true through the API) and they are sent.`,
    'Open the endpoint',
  );
}

/** The two health emails: the same facts, button target and footer; their own title, intro and button label. */
function endpointHealthEmail(d: EndpointHealthEmailData, title: string, intro: string, buttonLabel: string): BrandableEmail {
  return rendered(title, {
    merchant: d.merchantName,
    heading: title,
    amount: null,
    intro,
    facts: [
      { label: 'Endpoint', value: d.endpointId },
      { label: 'Failed attempts', value: String(d.failedAttempts) },
    ],
    lines: null,
    currency: 'usd',
    totals: [],
    button: { label: buttonLabel, url: d.dashboardUrl },
    links: [],
    footer: 'You receive this email as an owner or administrator of the account.',
  });
}
