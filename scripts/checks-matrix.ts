// Prints the platform x check matrix: how many fixtures each cell has per verdict, after running
// every fixture through its platform's real collector and evaluator. `-- --json` prints JSON.
// Exits 1 when a fixture's status or recorded evidence (a subset, as the fixture test reads it)
// disagrees with what the check now says.
import { CHECK_KEYS, PLATFORMS, STATUSES, type PostureStatus } from '../src/protocol/schemas';
import { listFixtures, runFixture } from '../test/support/checkFixtures';

type Counts = Record<PostureStatus, number>;
const zero = (): Counts => ({ PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_APPLICABLE: 0 });

/** `expected` is contained in `actual`: objects field by field, arrays item by item (toMatchObject's reading). */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => contains(actual[i], e));
  if (expected !== null && typeof expected === 'object') {
    return actual !== null && typeof actual === 'object' && Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
  }
  return Object.is(actual, expected);
}

const cells = new Map<string, Counts>();
const mismatches: string[] = [];
for (const loaded of listFixtures()) {
  const { verdict } = await runFixture(loaded);
  const key = `${loaded.platform}/${loaded.checkKey}`;
  const counts = cells.get(key) ?? zero();
  counts[verdict.status] += 1;
  cells.set(key, counts);
  if (verdict.status !== loaded.fixture.expect.status) {
    mismatches.push(`${key}/${loaded.name}: expected ${loaded.fixture.expect.status}, got ${verdict.status}`);
  } else if (loaded.fixture.expect.evidence && !contains(verdict.evidence, loaded.fixture.expect.evidence)) {
    mismatches.push(`${key}/${loaded.name}: evidence differs from the recorded ${JSON.stringify(loaded.fixture.expect.evidence)}`);
  }
}

const rows = PLATFORMS.flatMap((platform) =>
  CHECK_KEYS.map((check_key) => ({ platform, check_key, fixtures: cells.get(`${platform}/${check_key}`) ?? zero() })),
);

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows, null, 2));
} else {
  const abbrev: Record<PostureStatus, string> = { PASS: 'P', FAIL: 'F', UNKNOWN: 'U', NOT_APPLICABLE: 'NA' };
  const cell = (c: Counts) => STATUSES.map((s) => `${abbrev[s]}${c[s]}`).join(' ');
  const width = 20;
  console.log(['check'.padEnd(width), ...PLATFORMS.map((p) => p.padEnd(18))].join(' '));
  for (const check of CHECK_KEYS) {
    const line = PLATFORMS.map((p) => cell(cells.get(`${p}/${check}`) ?? zero()).padEnd(18));
    console.log([check.padEnd(width), ...line].join(' '));
  }
  const empty = rows.filter((r) => STATUSES.every((s) => r.fixtures[s] === 0)).length;
  console.log(`\n${rows.length} cells, ${rows.length - empty} with fixtures; P=PASS F=FAIL U=UNKNOWN NA=NOT_APPLICABLE`);
}
if (mismatches.length) {
  console.error(`\n${mismatches.length} fixture(s) disagree with their recorded verdict:\n${mismatches.join('\n')}`);
  process.exitCode = 1;
}
