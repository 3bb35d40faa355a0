import { describe, expect, it } from 'vitest';
import { globMatches, isApiError, mismatch, readBlocks, readCommands, readPattern, shownAnswer } from '../helpers/readme.ts';

// The reading and matching rules of the README test (test/helpers/readme.ts), on small inputs.

const md = (s: string) => s.replace(/^ {4}/gm, '');

describe('reading the README', () => {
  it('when blocks have markers, then each block carries the marker right above its fence', () => {
    const blocks = readBlocks(
      md(`
    <!-- readme-test: skip: installs -->
    \`\`\`sh
    npm ci
    \`\`\`

    <!-- readme-test: background -->
    \`\`\`sh
    npm start
    \`\`\`
    \`\`\`
    listening
    \`\`\`
    <!-- readme-test: same as examples/receiver.mjs -->
    \`\`\`js
    x
    \`\`\``),
    );
    expect(blocks.map((b) => [b.line, b.lang, b.text, b.marker])).toEqual([
      [3, 'sh', 'npm ci', { kind: 'skip', why: 'installs' }],
      [8, 'sh', 'npm start', { kind: 'background' }],
      [11, '', 'listening', null],
      [15, 'js', 'x', { kind: 'file', path: 'examples/receiver.mjs' }],
    ]);
    expect(() => readBlocks('<!-- readme-test: perhaps -->\n```sh\nx\n```')).toThrow(/unknown readme-test marker "perhaps"/);
  });

  it('when a shell block has continued lines, quotes over lines, trailing comments and answers, then commands and answers are cut where bash would', () => {
    const [block] = readBlocks(
      md(`
    \`\`\`sh
    # Customers
    CUS=$(curl -s $API/v1/customers -H "$AUTH" \\
      -d '{"email":"ada@example.com",
           "metadata":{"crm_id":"42"}}' | jq -r .id)   # the id, kept
    curl -s $API/v1/customers/$CUS -H "$AUTH"
    # {"id":"cus_…",
    #  "email":"ada@example.com",…}

    # Then a list
    curl -s "$API/v1/customers?email=a#b" |
      jq .data
    \`\`\``),
    );
    const commands = readCommands(block!);
    expect(commands.map((c) => [c.line, c.answer])).toEqual([
      [4, null],
      [7, ['{"id":"cus_…",', ' "email":"ada@example.com",…}']],
      [12, null],
    ]);
    expect(commands[0]!.text.split('\n')).toHaveLength(3);
    // A string inside $( ) inside a string, as bash reads it: one command, not an open quote.
    const [nested] = readBlocks('```sh\nuntil [ "$(curl -s "$API/x" | jq \'.data | length\')" = 1 ]; do sleep 0.5; done\necho done\n```');
    expect(readCommands(nested!).map((c) => c.text)).toEqual(['until [ "$(curl -s "$API/x" | jq \'.data | length\')" = 1 ]; do sleep 0.5; done', 'echo done']);
    expect(commands[2]!.text).toBe('curl -s "$API/v1/customers?email=a#b" |\n  jq .data');
  });
});

describe('matching a shown answer', () => {
  it('when the shown JSON has … for values, members, elements and parts of strings, then only what is shown is required', () => {
    const p = readPattern('{"id":"cs_…","object":"checkout_session","amount":2500,"created":…,"items":[{"name":"Tea",…},…],…}');
    expect(mismatch(p, { id: 'cs_01abc', object: 'checkout_session', amount: 2500, created: 1, items: [{ name: 'Tea', q: 1 }, { name: 'Pot' }], url: 'x' })).toBeNull();
    expect(mismatch(p, { id: 'cs_01abc', object: 'checkout_session', amount: 2400, created: 1, items: [{ name: 'Tea' }] })).toBe('$.amount: 2400 is not 2500');
    expect(mismatch(p, { id: 'pay_1', object: 'checkout_session', amount: 2500, created: 1, items: [{ name: 'Tea' }] })).toBe('$.id: "pay_1" does not match "cs_…"');
    expect(mismatch(p, { id: 'cs_1', object: 'checkout_session', amount: 2500, created: 1, items: [] })).toBe('$.items[0]: missing');
  });

  it('when an object is shown without …, then it must have exactly those members; an array without … exactly those elements', () => {
    expect(mismatch(readPattern('{"a":1}'), { a: 1, b: 2 })).toBe('$: members not shown: b (show them, or add …)');
    expect(mismatch(readPattern('[1,2]'), [1, 2, 3])).toBe('$: 1 more element(s) than shown (add …)');
    expect(mismatch(readPattern('[…,3]'), [1, 2, 3])).toBeNull();
    expect(mismatch(readPattern('{…"status":"PAID"…}'), { a: 1, status: 'PAID' })).toBeNull();
  });

  it('when an answer names localhost:3000 or :4000, then the ports in use stand in; (exit N) is the expected status; text lines glob with … and any spacing', () => {
    const a = shownAnswer(['{"url":"http://localhost:3000/checkout/cs_…"}'], { 3000: '41234', 4000: '41235' });
    expect(a.matches('{"url":"http://localhost:41234/checkout/cs_01"}')).toBeNull();
    expect(a.matches('{"url":"http://localhost:3000/checkout/cs_01"}')).toMatch(/does not match/);
    const text = shownAnswer(['missing  NODE_ENV: …', '…', '5 required settings missing for production', '(exit 1)'], {});
    expect(text.exit).toBe(1);
    expect(text.matches('missing NODE_ENV: production\nok   x\nok y\n5 required settings missing for production\n')).toBeNull();
    expect(text.matches('ok NODE_ENV\n5 required settings missing for production\n')).toMatch(/the lines differ/);
    expect(globMatches('…  payment.succeeded   evt_…  200 (… ms)', '13:34:41  payment.succeeded            evt_01ab  200 (11 ms)', true)).toBe(true);
  });

  it('when an answer is an API error, then it is told apart from any other answer', () => {
    expect(isApiError('{"error":{"type":"invalid_request_error"}}')).toBe(true);
    expect(isApiError('{"id":"cus_1"}')).toBe(false);
    expect(isApiError('sk_test_abc')).toBe(false);
  });
});
