// Prints the platform x check matrix: how many fixtures each cell has per verdict, after running
// every fixture through its platform's real collector and evaluator. `-- --json` prints JSON;
// `-- --since <git ref>` also counts, per cell, the fixtures added since that commit (+N).
// Exits 1 when a fixture's status or recorded evidence (a subset, as the fixture test reads it)
// disagrees with what the check now says.
import { execFileSync } from 'node:child_process';
import { relative } from 'node:path';
import { CHECK_KEYS, PLATFORMS, STATUSES, type PostureStatus } from '../src/protocol/schemas';
import { listFixtures, runFixture } from '../test/support/checkFixtures';

type Counts = Record<PostureStatus, number>;
const zero = (): Counts => ({ PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_APPLICABLE: 0 });

/** `expected` is contained in `actual`: objects field by field, arrays item by item (toMatchObject's reading). */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => contains(actual[i], e));
  if (expected !== null && typeof expected === 'object') {
    return (
      actual !== null &&
      typeof actual === 'object' &&
      Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v))
    );
  }
  return Object.is(actual, expected);
}

/** The fixture files that existed at `ref`, when `--since <ref>` asks; null otherwise. */
function fixturesAt(): Set<string> | null {
  const at = process.argv.indexOf('--since');
  if (at === -1) return null;
  const ref = process.argv[at + 1];
  if (!ref) throw new Error('--since needs a git ref (a commit, tag or branch)');
  return new Set(
    execFileSync('git', ['ls-tree', '-r', '--name-only', ref, '--', 'test/fixtures/checks'], { encoding: 'utf8' }).split('\n'),
  );
}

const before = fixturesAt();
const cells = new Map<string, Counts>();
const added = new Map<string, number>();
const mismatches: string[] = [];
for (const loaded of listFixtures()) {
  const { verdict } = await runFixture(loaded);
  const key = `${loaded.platform}/${loaded.checkKey}`;
  const counts = cells.get(key) ?? zero();
  counts[verdict.status] += 1;
  cells.set(key, counts);
  if (before && !before.has(relative(process.cwd(), loaded.file))) added.set(key, (added.get(key) ?? 0) + 1);
  if (verdict.status !== loaded.fixture.expect.status) {
    mismatches.push(`${key}/${loaded.name}: expected ${loaded.fixture.expect.status}, got ${verdict.status}`);
  } else if (loaded.fixture.expect.evidence && !contains(verdict.evidence, loaded.fixture.expect.evidence)) {
    mismatches.push(`${key}/${loaded.name}: evidence differs from the recorded ${JSON.stringify(loaded.fixture.expect.evidence)}`);
  }
}

const rows = PLATFORMS.flatMap((platform) =>
  CHECK_KEYS.map((check_key) => ({
    platform,
    check_key,
    fixtures: cells.get(`${platform}/${check_key}`) ?? zero(),
    ...(before ? { new: added.get(`${platform}/${check_key}`) ?? 0 } : {}),
  })),
);

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows, null, 2));
} else {
  const abbrev: Record<PostureStatus, string> = { PASS: 'P', FAIL: 'F', UNKNOWN: 'U', NOT_APPLICABLE: 'NA' };
  const cell = (key: string) =>
    STATUSES.map((s) => `${abbrev[s]}${(cells.get(key) ?? zero())[s]}`).join(' ') + (before ? ` +${added.get(key) ?? 0}` : '');
  const width = 20;
  const column = before ? 23 : 18;
  console.log(['check'.padEnd(width), ...PLATFORMS.map((p) => p.padEnd(column))].join(' '));
  for (const check of CHECK_KEYS) {
    const line = PLATFORMS.map((p) => cell(`${p}/${check}`).padEnd(column));
    console.log([check.padEnd(width), ...line].join(' '));
  }
  const empty = rows.filter((r) => STATUSES.every((s) => r.fixtures[s] === 0)).length;
  console.log(`\n${rows.length} cells, ${rows.length - empty} with fixtures; P=PASS F=FAIL U=UNKNOWN NA=NOT_APPLICABLE`);
  if (before) {
    const perPlatform = PLATFORMS.map((p) => `${p} ${CHECK_KEYS.reduce((n, c) => n + (added.get(`${p}/${c}`) ?? 0), 0)}`);
    console.log(`+N: fixtures added since ${process.argv[process.argv.indexOf('--since') + 1]} (${perPlatform.join(', ')})`);
  }
}
if (mismatches.length) {
  console.error(`\n${mismatches.length} fixture(s) disagree with their recorded verdict:\n${mismatches.join('\n')}`);
  process.exitCode = 1;
}
