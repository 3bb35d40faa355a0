import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser } from '../browser.ts';
import { startStripeStandIn, type StripeStandIn } from './api.ts';

/** The merchant's own site for success_url and cancel_url: a page that names the path it was asked for. */
async function startMerchantSite(): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Merchant ${req.url}</h1>`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

export interface StripePage {
  /** The Stripe API stand-in, which also serves the Stripe.js stand-in. */
  readonly api: StripeStandIn;
  /** The merchant's site, for success_url and cancel_url. */
  readonly merchantUrl: string;
  readonly browser: Browser;
}

/**
 * What a file driving the Payment Element page needs beside its test server: the Stripe stand-ins,
 * the merchant's site and a browser, started in beforeAll and closed in afterAll. The handle reads
 * through to them once they have started (inside a hook or a test).
 */
export function useStripePage(): StripePage {
  let api: StripeStandIn | undefined;
  let merchant: Awaited<ReturnType<typeof startMerchantSite>> | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    api = await startStripeStandIn();
    merchant = await startMerchantSite();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    merchant?.close();
    await api?.close();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('useStripePage starts in beforeAll: use it inside a hook or a test');
    return v;
  };
  return {
    get api() {
      return started(api);
    },
    get merchantUrl() {
      return started(merchant).url;
    },
    get browser() {
      return started(browser);
    },
  };
}
