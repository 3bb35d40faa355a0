import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, csvLine, decimalAmount, isoUtc } from '../../src/exports/csv.ts';

describe('CSV cells', () => {
  it.each([
    ['=HYPERLINK("http://evil.example","click")', `"'=HYPERLINK(""http://evil.example"",""click"")"`],
    ['+1 555 0100', "'+1 555 0100"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['\tTab', "'\tTab"],
    ['\rCR', `"'\rCR"`],
    ['Ada, Countess', '"Ada, Countess"'],
    ['plain', 'plain'],
  ])('when a cell is %j, then it is written %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  it('when any text cells are written and read back by csv-parse, then each is the text, with a quote before a formula', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 20 }), { minLength: 1, maxLength: 6 }), (values) => {
        const [read] = parse(csvLine(values), { relax_column_count: false, bom: false }) as string[][];
        expect(read).toEqual(values.map((v) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v)));
      }),
      { numRuns: 1000 },
    );
  });

  it('when amounts and times are written, then they are decimals of the currency and UTC ISO 8601', () => {
    expect(decimalAmount(1999, 'usd')).toBe('19.99');
    expect(decimalAmount(5, 'eur')).toBe('0.05');
    expect(decimalAmount(1999, 'jpy')).toBe('1999');
    expect(decimalAmount(1999, 'kwd')).toBe('1.999');
    expect(isoUtc(new Date(Date.UTC(2026, 0, 1, 12, 30, 5, 999)))).toBe('2026-01-01T12:30:05Z');
    expect(isoUtc(null)).toBe('');
  });
});
