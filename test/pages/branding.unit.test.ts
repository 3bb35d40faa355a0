import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { brandCss, brandCssHash, contrastRatio, relativeLuminance, renderPage, textColorOn } from '../../src/pages/layout.ts';
import { html } from '../../src/pages/html.ts';

describe('the text colour of a brand-coloured button', () => {
  it('when the colour is dark, then the text is white; when it is light, then the text is black', () => {
    expect(textColorOn('#000000')).toBe('#ffffff');
    expect(textColorOn('#635bff')).toBe('#ffffff');
    expect(textColorOn('#0a2540')).toBe('#ffffff');
    expect(textColorOn('#ffffff')).toBe('#000000');
    expect(textColorOn('#ffd400')).toBe('#000000');
    expect(textColorOn('#7fff00')).toBe('#000000');
  });

  it('when luminance and contrast are computed, then they match the WCAG values', () => {
    expect(relativeLuminance('#000000')).toBe(0);
    expect(relativeLuminance('#ffffff')).toBeCloseTo(1, 10);
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 10);
    expect(contrastRatio('#ffffff', '#000000')).toBeCloseTo(21, 10);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('when any colour is chosen, then the text chosen on it reaches at least 4.5:1 (WCAG AA)', () => {
    let worst = 21;
    for (let r = 0; r < 256; r += 15) {
      for (let g = 0; g < 256; g += 15) {
        for (let b = 0; b < 256; b += 15) {
          const hex = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
          worst = Math.min(worst, contrastRatio(hex, textColorOn(hex)));
        }
      }
    }
    expect(worst).toBeGreaterThanOrEqual(4.5);
  });
});

describe('the brand stylesheet', () => {
  it('when built, then it colours the primary button with the chosen text colour, and its hash is the sha256 of exactly that text', () => {
    expect(brandCss('#ffd400')).toContain('.btn{background:#ffd400;color:#000000}');
    const digest = createHash('sha256').update(brandCss('#0a7cff')).digest('base64');
    expect(brandCssHash('#0a7cff')).toBe(`'sha256-${digest}'`);
  });

  it('when the colour is not #rrggbb in lower case, then it refuses to build CSS from it', () => {
    for (const bad of ['red', '#FFFFFF', '#fff', '#123456;}*{x:y', '']) expect(() => brandCss(bad)).toThrow();
  });

  it('when a page is rendered with a brand, then the name and logo head it (alt = name), and the colour style is in its own <style>', () => {
    const page = renderPage({ title: 'T', body: html`<p>x</p>`, brand: { business_name: 'Tea & Co', brand_color: '#0a7cff', logo_url: 'https://cdn.tea.example/l.png?a=1&b=2' } });
    expect(page).toContain('<img src="https://cdn.tea.example/l.png?a=1&amp;b=2" alt="Tea &amp; Co">');
    expect(page).toContain('<p class="brand-name">Tea &amp; Co</p>');
    expect(page).toContain(`<style>${brandCss('#0a7cff')}</style>`);
    const plain = renderPage({ title: 'T', body: html`<p>x</p>` });
    expect(plain).not.toContain('class="brand');
    expect(plain.match(/<style>/g)).toHaveLength(1);
  });
});
