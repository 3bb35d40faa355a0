import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/pages/html.ts';

describe('the html template tag', () => {
  it('when a value holds markup characters, then the five of them are escaped and the rest is kept', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp; é</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp; é&lt;/a&gt;');
    expect(html`<p>${'<b>'}${raw('<i>')}${null}${false}${[1, '&']}</p>`.value).toBe('<p>&lt;b&gt;<i>1&amp;</p>');
  });

  it('when a value holds a NUL or a lone surrogate, then each becomes U+FFFD and the page stays well-formed', () => {
    expect(escapeHtml('a\u0000b')).toBe('a\uFFFDb');
    expect(escapeHtml('x\uD800y\uDC00<')).toBe('x\uFFFDy\uFFFD&lt;');
    expect(escapeHtml('\uD83D\uDE00')).toBe('\uD83D\uDE00');
  });
});
