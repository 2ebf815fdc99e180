// The posture upload's check without zod (plainPostures) gives the schema's verdict: a body it
// accepts skips zod, so it must never accept one the schema refuses nor one whose parsed output
// the route would read differently. It accepts every one the schema does but those listed as left
// to zod (strings past a limit in UTF-16 units, lowercase `t`/`z` in a date-time, evidence
// z.record would not copy whole), which zod decides.
import { beforeAll, describe, expect, test } from 'vitest';
import { runChecks } from '../../checks/engine';
import { resolvePolicy } from '../../checks/policy';
import { loadChecks } from '../../checks/registry';
import { posturesBody } from '../../scripts/bench/server/harness';
import {
  MAX_EVIDENCE_DEPTH,
  MAX_RESULTS_PER_REQUEST,
  PLATFORMS,
  PosturesRequest,
  STATUSES,
  type PostureResult,
} from '../../src/protocol/schemas';
import { newId } from '../../src/server/ids';
import { plainPostures } from '../../src/server/routes/postures';
import { parseBody } from '../../src/server/validation';
import { listFixtures } from '../support/checkFixtures';
import { FakeHost } from '../support/fakeHost';

const RESULT = {
  check_key: 'DISK_ENCRYPTION',
  status: 'PASS',
  evidence: { filevault: 'on', volumes: [{ name: 'Macintosh HD', encrypted: true }] },
  observed_at: '2026-01-15T09:29:58.120Z',
};

/** An object nested `depth` levels deep, the outermost counted (as nestsAtMost counts evidence); values other than objects do not count. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1, none: null };
  for (let level = 1; level < depth; level++) value = level % 2 ? { list: [value] } : { inner: value };
  return value;
}

/** A field's value, and whether zod alone decides it (it accepts it, but not as plainPostures reads it or counts it). */
type Value = [value: unknown, leftToZod?: 'left to zod'];
const LEFT = 'left to zod' as const;
const WRONG_TYPES: Value[] = [[null], [0], [true], [[]], [{}], [['x']]];

const VALUES: Record<keyof PostureResult, Value[]> = {
  check_key: [
    [undefined],
    ...WRONG_TYPES,
    [''],
    ['a'],
    ['x'.repeat(127)],
    ['x'.repeat(128)],
    ['x'.repeat(129)],
    ['\u0000'],
    ['a\u0000b'],
    ['😀'.repeat(64)],
    // Past the limit in UTF-16 units, within it in code points (zod accepts), and past it in both.
    ['😀'.repeat(64) + 'x', LEFT],
    ['😀'.repeat(128), LEFT],
    ['😀'.repeat(129)],
    ['x.custom_check'],
  ],
  status: [[undefined], ...WRONG_TYPES, ...STATUSES.map((status): Value => [status]), ['pass'], ['Pass'], ['PASS '], [''], ['ERROR']],
  evidence: [
    [undefined],
    [null],
    [0],
    ['text'],
    [true],
    [[]],
    [['x']],
    [{}],
    [{ a: 1, b: 'two', c: null, d: [1, { e: false }] }],
    [nested(MAX_EVIDENCE_DEPTH - 1)],
    [nested(MAX_EVIDENCE_DEPTH)],
    [nested(MAX_EVIDENCE_DEPTH + 1)],
    [{ deep: [nested(MAX_EVIDENCE_DEPTH - 1)] }],
    [{ deep: [nested(MAX_EVIDENCE_DEPTH)] }],
    // z.record drops an own __proto__ key from its output (and then checks the depth without it).
    [JSON.parse('{"__proto__": {"a": 1}, "b": 2}'), LEFT],
    [JSON.parse(`{"__proto__": ${JSON.stringify(nested(MAX_EVIDENCE_DEPTH + 1))}}`), LEFT],
    [{ inner: JSON.parse('{"__proto__": {"a": 1}}') as unknown }],
    // zod takes any object whose constructor is not a function, or is Object's.
    [JSON.parse('{"constructor": "x"}'), LEFT],
    [Object.assign(Object.create(null) as object, { a: 1 }), LEFT],
    [new Date(0)],
    [new Map([['a', 1]])],
    [new (class Evidence {})()],
  ],
  observed_at: [
    [undefined],
    ...WRONG_TYPES,
    [Date.parse('2026-01-15T09:29:58Z')],
    [['2026-01-15T09:29:58Z']],
    [new Date('2026-01-15T09:29:58Z')],
    [''],
    ['2026-01-15T09:29:58Z'],
    ['2026-01-15T09:29:58.1Z'],
    ['2026-01-15T09:29:58.123456789Z'],
    ['2026-01-15T09:29:58.Z'],
    ['2026-01-15T09:29:58+01:00'],
    ['2026-01-15T09:29:58.120-05:30'],
    ['2026-01-15T09:29:58+23:59'],
    ['2026-01-15T09:29:58+24:00'],
    ['2026-01-15T09:29:58+0100'],
    ['2026-01-15T09:29:58'],
    ['2026-01-15T09:29Z'],
    ['2026-01-15T24:00:00Z'],
    ['2026-01-15T23:59:60Z'],
    ['2026-01-15 09:29:58Z'],
    [' 2026-01-15T09:29:58Z'],
    ['2026-01-15T09:29:58Z\n'],
    ['2026-01-15'],
    ['2023-02-29T00:00:00Z'],
    ['2024-02-29T00:00:00Z'],
    ['2000-02-29T00:00:00Z'],
    ['1900-02-29T00:00:00Z'],
    ['2026-04-31T00:00:00Z'],
    ['2026-13-01T00:00:00Z'],
    ['٢٠٢٦-01-15T09:29:58Z'],
    // RFC 3339 allows lowercase `t` and `z`: zod upper-cases them before its check.
    ['2026-01-15t09:29:58Z', LEFT],
    ['2026-01-15T09:29:58z', LEFT],
    ['2026-01-15t09:29:58.120+01:00', LEFT],
  ],
  correlation_id: [
    [undefined],
    ...WRONG_TYPES,
    [''],
    ['a'],
    [newId('postureReport')],
    ['x'.repeat(128)],
    ['x'.repeat(129)],
    ['\u0000'],
    ['😀'.repeat(64)],
    ['😀'.repeat(64) + 'x', LEFT],
    ['😀'.repeat(129)],
  ],
};
const FIELDS = Object.keys(VALUES) as (keyof PostureResult)[];

function withField(field: string, value: unknown): Record<string, unknown> {
  const result: Record<string, unknown> = { ...RESULT };
  if (value === undefined) delete result[field];
  else result[field] = value;
  return { results: [result] };
}

function describeValue(value: unknown): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) {
    return `a ${(Object.getPrototypeOf(value) as { constructor?: { name: string } } | null)?.constructor?.name ?? 'null-prototype object'}`;
  }
  return String(JSON.stringify(value)).slice(0, 32);
}

const cases: [name: string, body: unknown, leftToZod?: 'left to zod'][] = [
  ['one result', { results: [RESULT] }],
  ['with a correlation_id', { results: [{ ...RESULT, correlation_id: newId('postureReport') }] }],
  ['the benchmark upload (posturesBody(9))', JSON.parse(posturesBody(9))],
  ['with unknown fields', { results: [{ ...RESULT, note: { nested: [1] }, score: 3 }], extra: 'x', policy_version: '3.1' }],
  [
    'an own __proto__ key in a result and the root',
    JSON.parse(`{"__proto__": 1, "results": [{"__proto__": {"status": "BAD"}, ${JSON.stringify(RESULT).slice(1)}]}`),
  ],
  ...[null, [], [RESULT], { results: RESULT }, 'text', 5, true, {}].map((body): [string, unknown] => [`root ${describeValue(body)}`, body]),
  ['results empty', { results: [] }],
  [`results ${MAX_RESULTS_PER_REQUEST - 1}`, { results: Array.from({ length: MAX_RESULTS_PER_REQUEST - 1 }, () => RESULT) }],
  [`results ${MAX_RESULTS_PER_REQUEST}`, { results: Array.from({ length: MAX_RESULTS_PER_REQUEST }, () => RESULT) }],
  [`results ${MAX_RESULTS_PER_REQUEST + 1}`, { results: Array.from({ length: MAX_RESULTS_PER_REQUEST + 1 }, () => RESULT) }],
  ...[null, 'x', 0, [], [RESULT], new Date(0)].map((result): [string, unknown] => [
    `a result ${describeValue(result)}`,
    { results: [result] },
  ]),
  ['a bad result after good ones', { results: [RESULT, RESULT, { ...RESULT, status: 'BAD' }] }],
  ['a bad result before good ones', { results: [{ ...RESULT, check_key: '' }, RESULT, RESULT] }],
  ['a result left to zod after good ones', { results: [RESULT, { ...RESULT, observed_at: '2026-01-15t09:29:58Z' }] }, LEFT],
  // Not JSON's, but z.object refuses an array even with the fields it reads.
  ['root an array with results', Object.assign([], { results: [RESULT] })],
  ['a result an array with its fields', { results: [Object.assign([], RESULT)] }],
  ['a sparse array', { results: Object.assign(new Array<unknown>(3), { 0: RESULT, 2: RESULT }) }],
  ...FIELDS.flatMap((field) =>
    VALUES[field].map(([value, left]): [string, unknown, 'left to zod'?] => [
      `${field} = ${describeValue(value)}`,
      withField(field, value),
      left,
    ]),
  ),
];

/** What the route reads of an upload (toNewResult's fields, evidence as it is stored). */
function reading(body: PosturesRequest) {
  return body.results.map((result) => ({
    check_key: result.check_key,
    status: result.status,
    evidence: JSON.stringify(result.evidence),
    observed_at: result.observed_at,
    correlation_id: result.correlation_id,
  }));
}

function parseOutcome(body: unknown, acceptsAsIs?: typeof plainPostures): unknown {
  try {
    return reading(parseBody(PosturesRequest, body, acceptsAsIs));
  } catch (err) {
    return { refused: (err as Error).message };
  }
}

describe('plainPostures', () => {
  test.each(cases)('%s: the same verdict as the schema, or left to it', (_name, body, leftToZod) => {
    const parsed = PosturesRequest.safeParse(body);
    if (leftToZod) expect(parsed.success).toBe(true);
    expect(plainPostures(body)).toBe(parsed.success && !leftToZod);
    if (plainPostures(body)) expect(reading(body)).toEqual(reading(parsed.data!));
    // The route's answer, accepted or refused with zod's message, is the same with and without it.
    expect(parseOutcome(body, plainPostures)).toEqual(parseOutcome(body));
  });

  test('the cases include bodies both accept and bodies both refuse for every field', () => {
    for (const field of FIELDS) {
      const verdicts = VALUES[field].map(([value]) => plainPostures(withField(field, value)));
      expect(verdicts, field).toContain(true);
      expect(verdicts, field).toContain(false);
    }
  });

  describe("the agent's uploads", () => {
    // Per platform, one result per check from the real checks on recorded hosts, as the engine
    // builds them (checks/engine.ts), through JSON as the server receives them.
    const uploads = new Map<string, unknown>();
    beforeAll(async () => {
      const fixtures = listFixtures();
      for (const platform of PLATFORMS) {
        const checks = await loadChecks(platform);
        const results: PostureResult[] = [];
        for (const check of checks) {
          const loaded = fixtures.find((fixture) => fixture.platform === platform && fixture.checkKey === check.key);
          if (!loaded) continue;
          const host = new FakeHost(loaded.fixture.host);
          const policy = resolvePolicy(loaded.fixture.policy ?? {});
          results.push(...(await runChecks([check], { host, policy })));
        }
        uploads.set(platform, JSON.parse(JSON.stringify({ results })));
        // A later batch of the cycle carries the report id the server returned.
        const reportId = newId('postureReport');
        uploads.set(
          `${platform} with correlation_id`,
          JSON.parse(JSON.stringify({ results: results.map((r) => ({ ...r, correlation_id: reportId })) })),
        );
      }
    });

    test.each(PLATFORMS.flatMap((platform) => [platform, `${platform} with correlation_id`]))(
      '%s: skips zod, read as zod reads it',
      (name) => {
        const body = uploads.get(name);
        expect((body as PosturesRequest).results).toHaveLength(9);
        expect(plainPostures(body)).toBe(true);
        expect(reading(body as PosturesRequest)).toEqual(reading(PosturesRequest.parse(body)));
      },
    );
  });
});
