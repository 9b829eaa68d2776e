import fc from 'fast-check';
import { ROUTES, type Route } from './route-table.ts';

/**
 * Generated requests for the route fuzzer: each is a route of the table with its parameters, query, body, content
 * type and credential mangled one way or several. Generation knows nothing of the running gateway (ids are
 * placeholders resolved when sent), so a seed always yields the same list.
 */
export interface FuzzRequest {
  route: Route;
  method: string;
  path: string;
  contentType: string | undefined;
  body: string | Buffer | undefined;
  credential: 'main' | 'sub' | 'admin' | 'none' | 'garbage';
  /** What was mangled, for the report of a failure. */
  variant: string;
}

const longRun = (unit: string) => fc.integer({ min: 1_000, max: 60_000 }).map((n) => unit.repeat(n));
const nasty = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\uffff',
  '\u202e',
  '',
  ' ',
  '../../etc/passwd',
  '%00',
  '$' + '{jndi:x}',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
);
export const fuzzString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: nasty },
  { weight: 1, arbitrary: longRun('a') },
  { weight: 1, arbitrary: longRun('字') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1_000, maxLength: 5_000 }) },
);
const number = fc.oneof(
  fc.constantFrom(-1, 0, -0, 1.5, 1e308, -1e308, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, -(2 ** 31), 1e-320),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const deep = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};
export const fuzzValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fuzzString },
  { weight: 3, arbitrary: number },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 1, arbitrary: fc.array(fuzzString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 2_000 }).map(deep) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

const keysOf = (template: Record<string, unknown>) => [...Object.keys(template), 'model'];

/** Raw JSON texts that JSON.stringify cannot make: a JSON.parse of each is the server's problem. */
const rawText = (template: Record<string, unknown>) => {
  const inner = JSON.stringify(template).slice(1, -1);
  const around = (first: string, last = '') => `{${[first, inner, last].filter(Boolean).join(',')}}`;
  return fc.oneof(
    fc.constant(around('"__proto__":{"admin":true,"max_tokens":1}')),
    fc.constant(around('"constructor":{"prototype":{"x":1}}')),
    fc.constantFrom(...keysOf(template)).map((k) => around(`"${k}":123`, `"${k}":{"dup":true}`)),
    fc.integer({ min: 1_000, max: 100_000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
    fc.integer({ min: 1_000, max: 50_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
    fc.constantFrom('1e999', '-1e999', '123456789012345678901234567890', '{"max_tokens":1e400}', 'NaN'),
    fc.constantFrom('', ' ', '{', '{"model":', 'null', '[]', '"text"', '{}', '\u0000', '{"a":"\\ud800"}'),
    fc.string({ maxLength: 200 }),
  );
};
const invalidUtf8 = (template: Record<string, unknown>) =>
  fc
    .constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82])
    .map((bytes) => {
      const text = JSON.stringify({ ...template, name: 'XX', prompt: 'XX', input: 'XX' });
      const [head, ...rest] = text.split('XX');
      return Buffer.concat([Buffer.from(head ?? ''), Buffer.from(bytes), Buffer.from(rest.join('XX'))]);
    });
const garbageMultipart = fc.oneof(
  fc.constant({
    contentType: 'multipart/form-data; boundary=XyZ',
    body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"x":1}\r\n--XyZ--\r\n',
  }),
  fc.constant({ contentType: 'multipart/form-data', body: 'no boundary at all' }),
  fc.constant({ contentType: 'multipart/form-data; boundary=XyZ', body: '--XyZ\r\ngarbage without end' }),
  fc.string({ unit: 'binary', maxLength: 300 }).map((body) => ({
    contentType: 'multipart/form-data; boundary=Q',
    body: `--Q\r\nContent-Disposition: form-data; name="${body.slice(0, 5)}"\r\n\r\n${body}\r\n--Q--\r\n`,
  })),
  fc.constant({
    contentType: 'multipart/form-data; boundary=Q',
    body: `--Q\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n\u0000\r\n--Q\r\nContent-Disposition: form-data; name="file"; filename="\ud800.jsonl"\r\n\r\nx\r\n--Q--\r\n`,
  }),
);
const otherContentType = fc.constantFrom(
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'application/xml',
  'application/octet-stream',
  'application/json, text/plain',
);

const mutated = (template: Record<string, unknown>) =>
  fc.oneof(
    fc.tuple(fc.constantFrom(...keysOf(template)), fuzzValue).map(([k, v]) => ({ ...template, [k]: v })),
    fc.dictionary(fuzzString, fuzzValue, { maxKeys: 3 }).map((extra) => ({ ...template, ...extra })),
    fc.tuple(fc.constantFrom('messages', 'input', 'documents'), fuzzValue).map(([k, v]) => ({
      ...template,
      [k]: [{ role: 'user', content: v }],
    })),
    fc.jsonValue({ maxDepth: 3 }),
  );

type Body = { contentType: string | undefined; body: string | Buffer | undefined; variant: string };
/** A well-formed form whose fields (and file name) are fuzzed. */
const form = (template: Record<string, unknown>) =>
  fc.tuple(fc.constantFrom(...keysOf(template), 'filename'), fuzzString).map(([name, value]) => {
    const fields = { ...template, [name]: value } as Record<string, unknown>;
    const filename = name === 'filename' ? value : 'input.jsonl';
    const parts = Object.entries(fields)
      .filter(([k]) => k !== 'filename')
      .map(([k, v]) =>
        k === 'file'
          ? `--F\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${String(v)}\r\n`
          : `--F\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${String(v)}\r\n`,
      );
    return {
      contentType: 'multipart/form-data; boundary=F',
      body: `${parts.join('')}--F--\r\n`,
      variant: 'form',
    };
  });
const bodyFor = (route: Route): fc.Arbitrary<Body> => {
  const template = route.body ?? {};
  if (route.multipart) return fc.oneof({ weight: 2, arbitrary: form(template) }, jsonBodyFor(template));
  return jsonBodyFor(template);
};
const jsonBodyFor = (template: Record<string, unknown>): fc.Arbitrary<Body> => {
  const json = (variant: string) => (body: string | Buffer) => ({
    contentType: 'application/json',
    body,
    variant,
  });
  return fc.oneof(
    { weight: 6, arbitrary: mutated(template).map((v) => json('json')(JSON.stringify(v) ?? 'null')) },
    { weight: 3, arbitrary: rawText(template).map(json('raw')) },
    { weight: 1, arbitrary: invalidUtf8(template).map(json('invalid-utf8')) },
    { weight: 1, arbitrary: garbageMultipart.map((m) => ({ ...m, variant: 'multipart' })) },
    {
      weight: 1,
      arbitrary: otherContentType.map((contentType) => ({
        contentType,
        body: JSON.stringify(template),
        variant: `content-type ${contentType}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ contentType: 'application/json', body: undefined, variant: 'empty' }),
    },
  );
};

/** Percent-encodes any string, lone surrogates included (encodeURIComponent throws on those). */
const encode = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) }, // the fixture's real id
  { weight: 3, arbitrary: fuzzString.map((s) => encode(s.slice(0, 300))) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '%ED%A0%80', '%C0%AF', '..%2F..', '%2e%2e') },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 20_000 }).map((n) => 'x'.repeat(n)) },
);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'limit',
            'after',
            'order',
            'purpose',
            'month',
            'expires_in',
            '__proto__',
            'signature',
          ),
          fc.oneof(
            fuzzString.map((s) => encode(s.slice(0, 200))),
            fc.constantFrom('-1', '1e999', '%'),
          ),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  },
);

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .constantFrom(...ROUTES)
  .chain((route) =>
    fc.record({
      route: fc.constant(route),
      segments: fc.array(segment, { minLength: 3, maxLength: 3 }),
      query,
      body: route.method === 'GET' || route.method === 'DELETE' ? fc.constant(undefined) : bodyFor(route),
      credential: fc.oneof(
        { weight: 12, arbitrary: fc.constant(route.credential === 'admin' ? 'admin' : 'main') },
        { weight: 1, arbitrary: fc.constantFrom('sub', 'none', 'garbage', 'admin', 'main') },
      ),
    }),
  )
  .map(({ route, segments, query, body, credential }) => {
    let i = 0;
    const path = route.path.replace(/:\w+|\*/g, (param) => segments[i++] ?? param);
    return {
      route,
      method: route.method,
      path: path + query,
      contentType: body?.contentType,
      body: body?.body,
      credential: credential as FuzzRequest['credential'],
      variant: [
        body?.variant ?? 'no body',
        credential,
        segments.some(Boolean) ? 'path' : '',
        query ? 'query' : '',
      ]
        .filter(Boolean)
        .join(', '),
    };
  });

export function generate(seed: number, count: number): FuzzRequest[] {
  return fc.sample(fuzzRequest, { seed, numRuns: count });
}
