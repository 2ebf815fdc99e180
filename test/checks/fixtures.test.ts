// Every recorded fixture of every platform goes through that platform's real collector and
// evaluator (on a FakeHost) and must give the verdict it records.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECK_KEYS, PLATFORMS } from '../../src/protocol/schemas';
import { listFixtures, runFixture } from '../support/checkFixtures';

const fixtures = listFixtures();
// Evidence must never carry personal data (research §0.8).
const PERSONAL = [/\/home\/[^/\s"]+/, /\/Users\/[^/\s"]+/, /[A-Za-z]:\\Users\\/, /S-1-5-21-\d+/, /S-1-12-1-\d+/];

describe.each(fixtures.map((f) => [`${f.platform}/${f.checkKey}/${f.name}`, f] as const))('%s', (_name, loaded) => {
  it('gives the recorded verdict from the recorded output', async () => {
    const { verdict, host } = await runFixture(loaded);
    expect(verdict.status).toBe(loaded.fixture.expect.status);
    if (loaded.fixture.expect.evidence) expect(verdict.evidence).toMatchObject(loaded.fixture.expect.evidence);
    if (verdict.status === 'UNKNOWN' || verdict.status === 'NOT_APPLICABLE') expect(verdict.evidence.reason).toEqual(expect.any(String));
    for (const argv of host.commandsRun()) {
      expect(path.posix.isAbsolute(argv[0]!) || path.win32.isAbsolute(argv[0]!)).toBe(true);
    }
    const serialized = JSON.stringify(verdict.evidence);
    for (const pattern of PERSONAL) expect(serialized).not.toMatch(pattern);
  });
});

/**
 * Outcomes of a cell that no recording shows yet, each with why (docs/checks.md's audit table):
 * better a named gap than an invented machine. A recording added for one must remove it here.
 */
const UNRECORDED: ReadonlyMap<string, string> = new Map([
  ['FREEBSD/MALWARE_PROTECTION/pass', 'no public recording of a FreeBSD ClamAV signature database with its dates was found'],
  [
    'FREEBSD/AUTO_UPDATE/pass',
    "no public recording of freebsd-update's tag (/var/db/freebsd-update/tag) with its date, or of pkg's database time, was found",
  ],
]);

it.each(PLATFORMS)('covers every %s check with PASS, FAIL and UNKNOWN or NOT_APPLICABLE cases', (platform) => {
  for (const key of CHECK_KEYS) {
    const statuses = new Set(fixtures.filter((f) => f.platform === platform && f.checkKey === key).map((f) => f.fixture.expect.status));
    expect({
      key,
      pass: statuses.has('PASS'),
      fail: statuses.has('FAIL'),
      undecided: statuses.has('UNKNOWN') || statuses.has('NOT_APPLICABLE'),
    }).toEqual({
      key,
      pass: !UNRECORDED.has(`${platform}/${key}/pass`),
      fail: !UNRECORDED.has(`${platform}/${key}/fail`),
      undecided: !UNRECORDED.has(`${platform}/${key}/undecided`),
    });
  }
});
