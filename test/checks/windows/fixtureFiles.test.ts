// The Windows fixture files are what fixtureCases.ts renders with the current probe script: a
// changed script or case without `npx tsx test/checks/windows/writeFixtures.ts` fails here, with
// the file named, rather than as a puzzling UNKNOWN in test/checks/fixtures.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECK_KEYS } from '../../../src/protocol/schemas';
import { FIXTURE_ROOT } from '../../support/checkFixtures';
import { WINDOWS_FIXTURE_CASES } from './fixtureCases';
import { fixturePath, fixtureText } from './fixtureFiles';

const REFRESH = 'run `npx tsx test/checks/windows/writeFixtures.ts`';

describe('Windows fixture files', () => {
  it.each(WINDOWS_FIXTURE_CASES.map((c) => [`${c.check}/${c.name}`, c] as const))('%s is up to date', (_name, c) => {
    let text = '';
    try {
      text = readFileSync(fixturePath(c), 'utf8');
    } catch {
      expect.fail(`${fixturePath(c)} is missing: ${REFRESH}`);
    }
    expect(text === fixtureText(c), `${fixturePath(c)} is stale: ${REFRESH}`).toBe(true);
  });

  it('has no file without a case, and cases with unique names', () => {
    const root = path.join(FIXTURE_ROOT, 'windows');
    const onDisk = readdirSync(root).flatMap((dir) => readdirSync(path.join(root, dir)).map((file) => path.join(root, dir, file)));
    expect(onDisk.sort()).toEqual(WINDOWS_FIXTURE_CASES.map(fixturePath).sort());
    expect(new Set(WINDOWS_FIXTURE_CASES.map(fixturePath)).size).toBe(WINDOWS_FIXTURE_CASES.length);
  });

  it('covers every check with a PASS, a FAIL and an UNKNOWN or NOT_APPLICABLE case', () => {
    for (const check of CHECK_KEYS) {
      const statuses = new Set(WINDOWS_FIXTURE_CASES.filter((c) => c.check === check).map((c) => c.expect.status));
      expect([check, statuses.has('PASS'), statuses.has('FAIL'), statuses.has('UNKNOWN') || statuses.has('NOT_APPLICABLE')]).toEqual([
        check,
        true,
        true,
        true,
      ]);
    }
  });
});
