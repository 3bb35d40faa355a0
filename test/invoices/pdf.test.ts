import { PDFParse } from 'pdf-parse';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createCustomer, payInvoice, sentInvoice } from './page-helpers.ts';

const t = useTestServer();
let key: string;
beforeAll(async () => {
  const account = await t.account();
  key = account.test;
  await t.sql`update accounts set business_name = ${'Zürich Tea & Café – “Østergade” 茶'} where id = ${account.accountId}`;
});

async function download(url: string) {
  const res = await fetch(url);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, bytes };
}

async function textOf(bytes: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    // Lines wrap where the page is narrow: compared with single spaces.
    return (await parser.getText()).text.replace(/\s+/g, ' ');
  } finally {
    await parser.destroy();
  }
}

describe('the invoice PDF', () => {
  it('when the PDF is downloaded, then it is an attachment named after the number, and its text holds merchant, number, status, dates, bill-to, items and amounts, never the notes', async () => {
    const inv = await sentInvoice(t, key, { allow_partial_payments: true });
    expect(inv.invoice_pdf).toBe(`${inv.hosted_invoice_url}/pdf`);
    const { res, bytes } = await download(inv.invoice_pdf);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${inv.number}.pdf"`);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = await textOf(bytes);
    for (const s of [
      'Zürich Tea & Café – “Østergade” ?',
      `Invoice ${inv.number}`,
      'Status Open',
      'Issued',
      new Date(inv.due_date * 1000).toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' }),
      'BILL TO',
      'Ada Lovelace',
      'Analytical Engines Ltd',
      'ada@example.com',
      'Consulting, March',
      'Design review 2 $30.00 $60.00',
      'Workshop 1 $40.00 $40.00',
      'Total $100.00',
      'Amount paid $0.00',
      'Amount due $100.00',
      inv.hosted_invoice_url,
    ]) {
      expect(text, s).toContain(s);
    }
    expect(text).not.toContain('SECRET-NOTE');

    // After a partial payment the amounts follow.
    await payInvoice(t, inv.hosted_invoice_url, '40');
    const after = await textOf((await download(inv.invoice_pdf)).bytes);
    expect(after).toContain('Amount paid $40.00');
    expect(after).toContain('Amount due $60.00');
  });

  it('when items hold markup, quotes and characters Helvetica cannot draw, then the PDF is still made and the text reads with look-alikes', async () => {
    const customer = await createCustomer(t, key, { first_name: 'Zoë', last_name: 'Łukasiewicz 😀', company_name: 'Straße & Söhne "Ltd" <b>' });
    const inv = await sentInvoice(t, key, {
      customer_id: customer.id,
      currency: 'eur',
      description: 'Line one\nline two\ttabbed\u0007bell',
      line_items: [
        { name: '<script>alert(1)</script> & "quoted"', quantity: 1, amount: 1000 },
        { name: 'Kraków ő ł − 日本語 emoji 🎉 ‘single’ …', quantity: 3, amount: 250 },
        { name: 'x'.repeat(250), quantity: 1_000_000, amount: 1 },
      ],
    });
    const { res, bytes } = await download(inv.invoice_pdf);
    expect(res.status).toBe(200);
    const text = await textOf(bytes);
    expect(text).toContain('<script>alert(1)</script> & "quoted"');
    expect(text).toContain('Kraków o l - ??? emoji ? ‘single’ …');
    expect(text).toContain('Zoë Lukasiewicz ?');
    expect(text).toContain('Straße & Söhne "Ltd" <b>');
    expect(text).toContain('€10.00');
    expect(text).toContain('€7.50');
    expect(text).toContain('€10,000.00');
  });

  it('when the invoice has many items, then they run onto more pages and every one is there', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `Item number ${i + 1} with a longer name that wraps onto a second line of the table`, quantity: 1, amount: 100 }));
    const inv = await sentInvoice(t, key, { line_items: items });
    const { bytes } = await download(inv.invoice_pdf);
    const parser = new PDFParse({ data: new Uint8Array(bytes) });
    const result = await parser.getText();
    await parser.destroy();
    expect(result.pages.length).toBeGreaterThan(2);
    for (const n of [1, 50, 100]) expect(result.text).toContain(`Item number ${n} with`);
    expect(result.text).toContain('Total $100.00');
  });

  it('when the invoice is not sent or the token is unknown, then no PDF is served', async () => {
    const res = await fetch(`${t.url}/invoices/${'A'.repeat(32)}/pdf`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('text/html');
  });
});
