// scripts/windows-updates-update.ts: builds the Windows update table from the data set's entries as
// they are written, leaves out what no machine installs by itself, and refuses (writing nothing) what
// it cannot place.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildUpdateHistory, EXTRA_ROWS, feedRows, type ExtraRows, type FeedInput } from '../../scripts/windows-updates-update';
import { UPDATE_HISTORY } from '../../checks/windows/updateHistoryData';

// 13 entries of altrhombus/DataForGeeks content/ms/mswin/buildnumbers.json @ c3a7e94 (MIT), copied as they are.
const excerpt = readFileSync(new URL('../fixtures/dataforgeeks/buildnumbers.excerpt.json', import.meta.url), 'utf8');
const COMMIT = 'c3a7e94d718726a0989e152e3c9b9f0996880731';

// Lines of ZentrixLabs/windows-version-feed kb_cve_data.csv (MIT) as stored at 4bfc2af (2026-08-22),
// 2c7b435 (2026-08-13), 1bb3595 (2026-08-04) and dabe923 (2026-06-02), the header and some rows each,
// copied as they are.
const feedVersion = (commit: string) =>
  readFileSync(new URL(`../fixtures/windows-version-feed/kb_cve_data.${commit}.excerpt.csv`, import.meta.url), 'utf8');
const FEED: FeedInput = {
  commit: '4bfc2af5c883216f41fc08aa68bdc2083719d930',
  versions: ['4bfc2af', '2c7b435', '1bb3595'].map(feedVersion),
};
const FEED_SOURCE =
  "ZentrixLabs/windows-version-feed kb_cve_data.csv @ 4bfc2af and its history (MSRC CVRF: a KB's FixedBuild, its CVEs' first publication day)";

describe('buildUpdateHistory', () => {
  it("places each entry on its line by build, shared KBs on every line they name, Server 2025's own numbering apart", () => {
    const { lines, recordedThrough, source } = buildUpdateHistory(excerpt, COMMIT, []);
    expect(source).toMatchObject({ commit: COMMIT, lastUpdatedUtc: '2026-06-23T20:03:34.9535922Z' });
    expect(source.pages).toContain('https://aka.ms/WindowsUpdateHistory');
    expect(recordedThrough).toBe('2026-06-09');
    expect(lines.BUILD_1904X.rows).toEqual([[5737, '2025-04-08']]);
    expect(lines.BUILD_26100.rows).toEqual([
      [8457, '2026-05-12'],
      [8655, '2026-06-09'],
    ]);
    expect(lines.BUILD_26200.rows).toEqual(lines.BUILD_26100.rows);
    expect(lines.SERVER_2025.rows).toEqual([[32995, '2026-06-09']]);
    expect(lines.BUILD_14393.rows).toEqual([[9234, '2026-06-09']]);
    expect(lines.BUILD_2262X.sources).toEqual([`content/ms/mswin/buildnumbers.json @ ${COMMIT.slice(0, 7)}`]);
  });

  it('leaves out a hotpatch (only hotpatch-enrolled machines install it) and an expired update', () => {
    const { lines } = buildUpdateHistory(excerpt, COMMIT, []);
    // 26200.8390 is the 2026-05-12 hotpatch, 19045.5736 the withdrawn ("- EXPIRED") 2025-04-08 update.
    expect(lines.BUILD_26200.rows.map(([ubr]) => ubr)).not.toContain(8390);
    expect(lines.BUILD_1904X.rows.map(([ubr]) => ubr)).not.toContain(5736);
  });

  it('adds the extra rows with their source, and refuses one the data set now lists', () => {
    const extra: ExtraRows = { line: 'BUILD_26200', rows: [[8875, '2026-07-14']], source: 'CVE records' };
    const { lines } = buildUpdateHistory(excerpt, COMMIT, [extra]);
    expect(lines.BUILD_26200.rows.at(-1)).toEqual([8875, '2026-07-14']);
    expect(lines.BUILD_26200.sources).toContain('CVE records');
    expect(() => buildUpdateHistory(excerpt, COMMIT, [{ ...extra, rows: [[8655, '2026-06-09']] }])).toThrow(
      'extra row BUILD_26200 8655 (2026-06-09): the data set lists it now, as 2026-06-09: drop it',
    );
  });

  it('refuses rows that go back in time, entries it cannot read and a data set without its header', () => {
    const back: ExtraRows = { line: 'BUILD_26200', rows: [[9000, '2026-01-01']], source: 'x' };
    expect(() => buildUpdateHistory(excerpt, COMMIT, [back])).toThrow('BUILD_26200: 9000 (2026-01-01) is older than 8655 (2026-06-09)');
    const data = JSON.parse(excerpt) as { Data: unknown[] };
    const broken = JSON.stringify({ ...data, Data: [...data.Data, { Version: '26100', ReleaseDate: '2026-06-09' }] });
    expect(() => buildUpdateHistory(broken, COMMIT, [])).toThrow('cannot read the entry');
    expect(() => buildUpdateHistory(JSON.stringify({ Data: [] }), COMMIT, [])).toThrow('no Data list, LastUpdatedUTC or SourceList');
    expect(() => buildUpdateHistory('{', COMMIT, [])).toThrow('not JSON');
    const noServer = JSON.stringify({ ...data, Data: data.Data.filter((e) => !/^26100\.32/.test((e as { Version: string }).Version)) });
    expect(() => buildUpdateHistory(noServer, COMMIT, [])).toThrow('SERVER_2025: no rows');
  });

  it('takes from the feed one row per KB after the data set, the newest version of it, and never a month it cannot tell apart', () => {
    const byLine = Object.fromEntries(feedRows(FEED, '2026-06-23').map((g) => [g.line, g.rows]));
    expect(feedRows(FEED, '2026-06-23').every((g) => g.source === FEED_SOURCE)).toBe(true);
    expect(byLine).toEqual({
      // KB5120238 names 17763.9115 on 2026-08-13 and 17763.9121 from then on: the newest wins.
      BUILD_17763: [[9121, '2026-08-11']],
      BUILD_14393: [
        [9418, '2026-08-11'],
        [9339, '2026-07-14'],
      ],
      // 2026-07: KB5099539's CVEs were first published on 2026-07-14 and 2026-07-16, so no release day.
      BUILD_1904X: [[7663, '2026-08-11']],
      BUILD_2262X: [[7376, '2026-07-14']],
      // Server 2022 in 2026-08: two KBs (the hotpatch 20348.5440 and 20348.5499), not told apart: none.
    });
    expect(feedRows(FEED, '2026-07-14').flatMap((g) => g.rows.map(([, day]) => day))).not.toContain('2026-07-14');
  });

  it('reads an empty field, and refuses a feed version without its header or with a row it cannot read', () => {
    expect(feedRows({ ...FEED, versions: [feedVersion('dabe923')] }, '2026-05-01')).toEqual([
      { line: 'BUILD_17763', rows: [[8755, '2026-05-12']], source: FEED_SOURCE },
    ]);
    const [header, row] = feedVersion('dabe923').split('\n');
    expect(() => feedRows({ ...FEED, versions: [row!] }, '2026-05-01')).toThrow(
      '(stored version 0, newest first, up to 4bfc2af): not the expected header',
    );
    expect(() => feedRows({ ...FEED, versions: [`${header}\n${row!.replace(',,', ',7.8,')}`] }, '2026-05-01')).toThrow(
      'cannot read the line',
    );
    expect(() => feedRows({ ...FEED, versions: [`${header}\n${row!.replace('10.0.17763.8755', '17763.8755')}`] }, '2026-05-01')).toThrow(
      'cannot read the row',
    );
  });

  it("adds the feed's rows after the data set's last day, and refuses an extra row the feed lists", () => {
    const { lines, source } = buildUpdateHistory(excerpt, COMMIT, [], FEED);
    expect(source.feed).toEqual({ repository: 'ZentrixLabs/windows-version-feed', commit: FEED.commit });
    expect(lines.BUILD_2262X.rows.at(-1)).toEqual([7376, '2026-07-14']);
    expect(lines.BUILD_2262X.sources).toEqual([`content/ms/mswin/buildnumbers.json @ ${COMMIT.slice(0, 7)}`, FEED_SOURCE]);
    const listed: ExtraRows = { line: 'BUILD_14393', rows: [[9339, '2026-07-14']], source: 'CVE records' };
    expect(() => buildUpdateHistory(excerpt, COMMIT, [listed], FEED)).toThrow(
      'extra row BUILD_14393 9339 (2026-07-14): the feed lists it now, as 2026-07-14: drop it',
    );
    expect(buildUpdateHistory(excerpt, COMMIT, []).source.feed).toBeNull();
  });

  it('is what the vendored table holds: every extra row present, every line naming the data set first', () => {
    for (const group of EXTRA_ROWS) {
      const line = UPDATE_HISTORY.lines[group.line];
      expect(line.sources).toContain(group.source);
      for (const row of group.rows) expect(line.rows).toContainEqual(row);
    }
    for (const line of Object.values(UPDATE_HISTORY.lines))
      expect(line.sources[0]).toBe(`content/ms/mswin/buildnumbers.json @ ${UPDATE_HISTORY.source.commit.slice(0, 7)}`);
  });
});
