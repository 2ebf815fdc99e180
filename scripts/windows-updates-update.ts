// Regenerates the Windows cumulative-update table (checks/windows/updateHistoryData.ts) from a checkout
// of altrhombus/DataForGeeks (MIT), whose content/ms/mswin/buildnumbers.json copies every KB title
// "<date>—KB… (OS Build b.u)" from Microsoft's update history pages (aka.ms/WindowsUpdateHistory,
// aka.ms/Windows11UpdateHistory, the Windows Server 2022 update history): the pages themselves are
// not reachable from here. The months after the data set's last row come from a checkout of
// ZentrixLabs/windows-version-feed (MIT), whose kb_cve_data.csv is rewritten each day from Microsoft's
// security update guide (api.msrc.microsoft.com CVRF: per CVE and product the fixing KB, its FixedBuild
// and the CVE's first publication): every stored version of that file is read (see feedRows). Rows
// neither holds (Microsoft's release-information pages through Alitai12/Windows-Updatelist, and
// Patch Tuesdays from Microsoft's CVE records) are kept below in EXTRA_ROWS, each with its source; the
// script fails when a source read before lists one of them now (drop it) or gives it another date.
// Fails, writing nothing, on a row it cannot read or a line whose UBRs would not grow with their dates.
//   npm run windows-updates:update -- <checkout of altrhombus/DataForGeeks> <checkout of ZentrixLabs/windows-version-feed>
// Monthly refresh: pull both checkouts and run the script. When neither has caught up, add each line's
// UBR from that day's Microsoft CVE records (CVEProject/cvelistV5, Microsoft as CNA: `datePublic` is
// the day, each Windows product's `versionEndExcluding` the build.UBR) to EXTRA_ROWS with the CVE ids,
// and run the script again.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = path.join(ROOT, 'checks', 'windows', 'updateHistoryData.ts');
const DATA_FILE = 'content/ms/mswin/buildnumbers.json';
const FEED_FILE = 'kb_cve_data.csv';
const FEED_REPOSITORY = 'ZentrixLabs/windows-version-feed';
const DATE = /^\d{4}-\d{2}-\d{2}$/;

class UpdateError extends Error {}

/** One entry of buildnumbers.json (the fields this script reads). */
interface SourceEntry {
  Version: string;
  ReleaseDate: string;
  KBTitle: string;
  Comment: string;
}

/** A servicing line: the builds whose UBRs it takes, from which release day. */
interface LineSpec {
  builds: number[];
  from: string;
  /** UBRs at or above this are another product's numbering on the same build (Server 2025 from 2026-01). */
  ubrBelow?: number;
  ubrFrom?: number;
  note: string;
}

export const LINES = {
  BUILD_14393: { builds: [14393], from: '2025-03-01', note: 'Windows Server 2016 / LTSB 2016' },
  BUILD_17763: { builds: [17763], from: '2025-01-01', note: 'Windows 10 1809 / LTSC 2019 / IoT LTSC 2019 / Server 2019' },
  BUILD_1904X: { builds: [19044, 19045], from: '2025-01-01', note: 'Windows 10 22H2 and 21H2 / LTSC 2021: one KB each month' },
  BUILD_20348: { builds: [20348], from: '2025-01-01', note: 'Windows Server 2022' },
  BUILD_2262X: { builds: [22621, 22631], from: '2025-01-01', note: 'Windows 11 22H2 (until 2025-10) and 23H2' },
  BUILD_26100: {
    builds: [26100],
    from: '2024-10-01',
    ubrBelow: 32000,
    note: 'Windows 11 24H2, Enterprise LTSC 2024, IoT Enterprise LTSC 2024 (26100.32xxx is Server 2025)',
  },
  BUILD_26200: { builds: [26200], from: '2025-09-30', note: 'Windows 11 25H2' },
  SERVER_2025: {
    builds: [26100],
    from: '2026-01-01',
    ubrFrom: 32000,
    note: 'Windows Server 2025: its own numbering (26100.32xxx) from 2026-01; before, the rows of its release information',
  },
} satisfies Record<string, LineSpec>;
type LineKey = keyof typeof LINES;

/** Rows the data set does not hold, each with where it was read. */
export interface ExtraRows {
  line: LineKey;
  rows: [ubr: number, released: string][];
  source: string;
}

const ALITAI = (file: string, commit: string) =>
  `Alitai12/Windows-Updatelist "${file}" @ ${commit} (learn.microsoft.com/windows/release-health release information)`;
const CVE = (ids: string) => `Microsoft's CVE records in CVEProject/cvelistV5 (datePublic, versionEndExcluding): ${ids}`;

export const EXTRA_ROWS: ExtraRows[] = [
  {
    line: 'BUILD_17763',
    rows: [
      [6893, '2025-02-11'],
      [7009, '2025-03-11'],
      [7136, '2025-04-08'],
    ],
    source: ALITAI('Windows Server 2019 17763.txt', '0ebbd08'),
  },
  { line: 'BUILD_20348', rows: [[3095, '2025-01-18']], source: ALITAI('Windows Server 2022 20348.txt', '50a88c3') },
  {
    line: 'BUILD_26100',
    rows: [
      [1742, '2024-10-01'],
      [3915, '2025-04-25'],
    ],
    source: ALITAI('Windows 11 24H2 26100.txt', '6897ea6'),
  },
  { line: 'BUILD_26200', rows: [[6584, '2025-09-30']], source: ALITAI('Windows 11 24H2 26200.txt', 'e3aa85d') },
  {
    line: 'SERVER_2025',
    rows: [
      [1742, '2024-11-01'],
      [2314, '2024-11-12'],
      [2605, '2024-12-10'],
      [2894, '2025-01-14'],
      [3194, '2025-02-11'],
      [3476, '2025-03-11'],
      [3775, '2025-04-08'],
      [3781, '2025-04-16'],
      [4061, '2025-05-13'],
      [4066, '2025-05-27'],
      [4349, '2025-06-10'],
      [4652, '2025-07-08'],
      [4656, '2025-07-13'],
      [4946, '2025-08-12'],
      [6584, '2025-09-09'],
      [6588, '2025-09-22'],
    ],
    source: ALITAI('Windows Server 2025 26100.txt', '28bfe32'),
  },
  {
    line: 'SERVER_2025',
    rows: [
      [6899, '2025-10-14'],
      [6901, '2025-10-20'],
      [6905, '2025-10-23'],
      [7171, '2025-11-11'],
      [7178, '2025-11-18'],
      [7462, '2025-12-09'],
    ],
    source: `${DATA_FILE} @ 009b40f: the titles of these months naming OS Build 26100 alone, which Server 2025 installed`,
  },
  {
    line: 'BUILD_14393',
    rows: [
      [9512, '2026-09-08'],
      [9612, '2026-10-13'],
      [9688, '2026-11-10'],
    ],
    source: CVE('CVE-2026-45653, -68880, -70111, -70304, -119856'),
  },
  {
    line: 'BUILD_17763',
    rows: [
      [9245, '2026-09-08'],
      [9376, '2026-10-13'],
      [9487, '2026-11-10'],
    ],
    source: CVE('CVE-2026-32215, -35417, -45653, -54114, -68880, -70285, -70304, -119856'),
  },
  {
    line: 'BUILD_1904X',
    rows: [[7725, '2026-09-08']],
    source: CVE('CVE-2026-32181, -35417, -45653, -54114, -68880, -70304'),
  },
  {
    line: 'BUILD_20348',
    rows: [
      [5499, '2026-08-11'],
      [5622, '2026-09-08'],
      [5761, '2026-10-13'],
    ],
    source: CVE('CVE-2026-32181, -35417, -45653, -54114, -68880, -70285, -70304'),
  },
  {
    line: 'BUILD_2262X',
    rows: [[7582, '2026-09-08']],
    source: CVE('CVE-2026-32181, -35417, -45653, -68880, -70304'),
  },
  ...(['BUILD_26100', 'BUILD_26200'] as const).map((line): ExtraRows => ({
    line,
    rows: [
      [8875, '2026-07-14'],
      [9168, '2026-08-11'],
      [9445, '2026-09-08'],
      [9711, '2026-10-13'],
    ],
    source: CVE('CVE-2026-32181, -35417, -45653, -54114, -62708, -68880, -85837'),
  })),
  {
    line: 'SERVER_2025',
    rows: [
      [32690, '2026-04-14'],
      [32860, '2026-05-12'],
      [33296, '2026-08-11'],
      [33438, '2026-09-08'],
      [33650, '2026-10-13'],
    ],
    source: CVE('CVE-2026-32181, -35417, -45653, -54114, -62708, -68880, -85837'),
  },
];

/**
 * Entries left out, by the data set's own words: a hotpatch installs only on hotpatch-enrolled
 * machines (its UBR falls between the month's neighbours), and an expired update was withdrawn.
 */
const LEFT_OUT = /hotpatch|expired/i;

/**
 * The feed's product names whose rows are taken, exactly as the CVRF names them (x64 and the server
 * products; Windows 11 24H2 and 25H2 are not in the feed: its build filter drops 26100/26200 clients).
 */
const FEED_PRODUCTS = new Set([
  'Windows Server 2016',
  'Windows Server 2019',
  'Windows 10 Version 21H2 for x64-based Systems',
  'Windows 10 Version 22H2 for x64-based Systems',
  'Windows Server 2022',
  'Windows 11 Version 23H2 for x64-based Systems',
  'Windows Server 2025',
]);
const FEED_HEADER = ['CVE', 'KB', 'ProductID', 'ProductName', 'FixedBuild', 'Severity', 'ExploitStatus', 'PublishedDate'];

/** The checkout of the feed: its newest commit and every stored version of kb_cve_data.csv, newest first. */
export interface FeedInput {
  commit: string;
  versions: string[];
}

function csvFields(line: string, where: string): string[] {
  // Quoted fields, or empty ones (Export-Csv writes a missing score as nothing between two commas).
  const fields: string[] = [];
  const field = /(?:"((?:[^"]|"")*)"|)(,|$)/y;
  for (;;) {
    const m = field.exec(line);
    if (!m) throw new UpdateError(`${where}: cannot read the line ${JSON.stringify(line.slice(0, 200))}`);
    fields.push((m[1] ?? '').replaceAll('""', '"'));
    if (m[2] === '') return fields;
  }
}

/**
 * One row per (product, KB) from the feed's stored versions: a version counts for a product only when
 * it names one KB with one FixedBuild for it (a month's hotpatch beside its cumulative update is not
 * told apart in the feed, so such months are left to EXTRA_ROWS) and all that KB's CVEs were first
 * published the same day, the release day. The newest version wins: Microsoft corrects a FixedBuild
 * in place (17763.9115 became 17763.9121 for KB5120238). Only days after `after` are taken.
 */
export function feedRows(feed: FeedInput, after: string): ExtraRows[] {
  const taken = new Map<string, { build: number; ubr: number; released: string }>();
  for (const [index, text] of feed.versions.entries()) {
    const where = `${FEED_REPOSITORY} ${FEED_FILE} (stored version ${index}, newest first, up to ${feed.commit.slice(0, 7)})`;
    const [header = '', ...lines] = text.split(/\r?\n/).filter((l) => l !== '');
    if (csvFields(header, where).join(',') !== FEED_HEADER.join(',')) throw new UpdateError(`${where}: not the expected header`);
    const updates = new Map<string, Map<string, Set<string>>>();
    for (const line of lines) {
      const [, kb = '', , product = '', fixedBuild = '', , , published = ''] = csvFields(line, where);
      if (!FEED_PRODUCTS.has(product)) continue;
      const day = published.slice(0, 10);
      if (!/^\d+$/.test(kb) || !/^10\.0\.\d+\.\d+$/.test(fixedBuild) || !DATE.test(day)) {
        throw new UpdateError(`${where}: cannot read the row ${JSON.stringify(line.slice(0, 200))}`);
      }
      const byUpdate = updates.get(product) ?? new Map<string, Set<string>>();
      updates.set(product, byUpdate);
      const key = `${kb} ${fixedBuild}`;
      byUpdate.set(key, (byUpdate.get(key) ?? new Set()).add(day));
    }
    for (const [product, byUpdate] of updates) {
      const [only, ...more] = [...byUpdate];
      if (!only || more.length > 0 || only[1].size !== 1) continue;
      const [kb = '', fixedBuild = ''] = only[0].split(' ');
      const released = [...only[1]][0]!;
      const [, , build, ubr] = fixedBuild.split('.').map(Number);
      const key = `${product} KB${kb}`;
      if (released > after && !taken.has(key)) taken.set(key, { build: build!, ubr: ubr!, released });
    }
  }
  const source = `${FEED_REPOSITORY} ${FEED_FILE} @ ${feed.commit.slice(0, 7)} and its history (MSRC CVRF: a KB's FixedBuild, its CVEs' first publication day)`;
  const groups = new Map<LineKey, ExtraRows>();
  for (const { build, ubr, released } of taken.values()) {
    for (const line of lineOf(build, ubr, released)) {
      const group = groups.get(line) ?? { line, rows: [], source };
      groups.set(line, group);
      if (!group.rows.some(([u]) => u === ubr)) group.rows.push([ubr, released]);
    }
  }
  return [...groups.values()];
}

export interface UpdateHistoryData {
  source: { dataSet: string; commit: string; lastUpdatedUtc: string; pages: string[]; feed: { repository: string; commit: string } | null };
  recordedThrough: string;
  lines: Record<LineKey, { note: string; sources: string[]; rows: [number, string][] }>;
}

function lineOf(build: number, ubr: number, released: string): LineKey[] {
  return (Object.entries(LINES) as [LineKey, LineSpec][])
    .filter(
      ([, spec]) =>
        spec.builds.includes(build) &&
        released >= spec.from &&
        (spec.ubrBelow === undefined || ubr < spec.ubrBelow) &&
        (spec.ubrFrom === undefined || ubr >= spec.ubrFrom),
    )
    .map(([key]) => key);
}

/**
 * The table from the data set's JSON text, the feed's rows after the data set's last day and the extra
 * rows; throws UpdateError on anything it cannot place.
 */
export function buildUpdateHistory(
  json: string,
  commit: string,
  extra: ExtraRows[] = EXTRA_ROWS,
  feed: FeedInput | null = null,
): UpdateHistoryData {
  let parsed: { DataForGeeks?: { LastUpdatedUTC?: unknown; SourceList?: unknown }; Data?: unknown };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch (err) {
    throw new UpdateError(`${DATA_FILE}: not JSON (${(err as Error).message})`);
  }
  const meta = parsed.DataForGeeks;
  if (!Array.isArray(parsed.Data) || typeof meta?.LastUpdatedUTC !== 'string' || !Array.isArray(meta.SourceList)) {
    throw new UpdateError(`${DATA_FILE}: no Data list, LastUpdatedUTC or SourceList`);
  }
  const rows = new Map<LineKey, Map<number, string>>(Object.keys(LINES).map((k) => [k as LineKey, new Map()]));
  const sources = new Map<LineKey, string[]>(Object.keys(LINES).map((k) => [k as LineKey, [`${DATA_FILE} @ ${commit.slice(0, 7)}`]]));
  const listedBy = new Map<string, string>();
  const put = (line: LineKey, ubr: number, released: string, where: string) => {
    const known = rows.get(line)!.get(ubr);
    if (known !== undefined && known !== released) throw new UpdateError(`${line} ${ubr}: ${known} and ${released} (${where})`);
    rows.get(line)!.set(ubr, released);
    if (!listedBy.has(`${line} ${ubr}`)) listedBy.set(`${line} ${ubr}`, where);
  };
  for (const entry of parsed.Data as SourceEntry[]) {
    const version = /^(\d+)\.(\d+)$/.exec(String(entry?.Version));
    if (!version || !DATE.test(String(entry.ReleaseDate))) {
      throw new UpdateError(`${DATA_FILE}: cannot read the entry ${JSON.stringify(entry).slice(0, 200)}`);
    }
    if (LEFT_OUT.test(`${entry.Comment} ${entry.KBTitle}`)) continue;
    for (const line of lineOf(Number(version[1]), Number(version[2]), entry.ReleaseDate)) {
      put(line, Number(version[2]), entry.ReleaseDate, entry.KBTitle);
    }
  }
  const dataSetThrough = [...rows.values()].flatMap((byUbr) => [...byUbr.values()]).reduce((a, b) => (b > a ? b : a), '');
  const fromFeed = feed ? feedRows(feed, dataSetThrough) : [];
  for (const group of [...fromFeed, ...extra]) {
    for (const [ubr, released] of group.rows) {
      if (rows.get(group.line)!.has(ubr)) {
        const by = listedBy.get(`${group.line} ${ubr}`)!;
        const named = by.startsWith(FEED_REPOSITORY)
          ? 'the feed'
          : extra.some((g) => g.source === by)
            ? `an extra row (${by})`
            : 'the data set';
        throw new UpdateError(
          `extra row ${group.line} ${ubr} (${released}): ${named} lists it now, as ${rows.get(group.line)!.get(ubr)}: drop it`,
        );
      }
      put(group.line, ubr, released, group.source);
    }
    const list = sources.get(group.line)!;
    if (!list.includes(group.source)) list.push(group.source);
  }
  const lines = {} as UpdateHistoryData['lines'];
  let recordedThrough = '';
  for (const [key, spec] of Object.entries(LINES) as [LineKey, LineSpec][]) {
    const sorted = [...rows.get(key)!].sort((a, b) => a[0] - b[0]);
    if (sorted.length === 0) throw new UpdateError(`${key}: no rows`);
    sorted.forEach(([ubr, released], i) => {
      const before = sorted[i - 1];
      if (before && released < before[1]) throw new UpdateError(`${key}: ${ubr} (${released}) is older than ${before[0]} (${before[1]})`);
      if (released > recordedThrough) recordedThrough = released;
    });
    lines[key] = { note: spec.note, sources: sources.get(key)!, rows: sorted };
  }
  return {
    source: {
      dataSet: `altrhombus/DataForGeeks ${DATA_FILE}`,
      commit,
      lastUpdatedUtc: meta.LastUpdatedUTC,
      pages: meta.SourceList.map(String),
      feed: feed ? { repository: FEED_REPOSITORY, commit: feed.commit } : null,
    },
    recordedThrough,
    lines,
  };
}

async function render(data: UpdateHistoryData): Promise<string> {
  const text = [
    `// Generated by scripts/windows-updates-update.ts (npm run windows-updates:update -- <checkout of altrhombus/DataForGeeks>`,
    `// <checkout of ${FEED_REPOSITORY}>): do not edit.`,
    `// Each line's rows are [UBR, release day] as Microsoft's update history pages list them (through the data set,`,
    `// MIT License, Copyright 2026 Jacob Thornberry), plus the rows its \`sources\` name (${FEED_REPOSITORY}: MIT License,`,
    `// Copyright (c) 2025 ZentrixLabs); checks/windows/updateHistory.ts reads them.`,
    ``,
    `export const UPDATE_HISTORY = ${JSON.stringify(data)} as const;`,
  ].join('\n');
  return format(text, { ...(await resolveConfig(TARGET)), filepath: TARGET });
}

const git = (dir: string, args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });

/** Every stored version of the feed's kb_cve_data.csv, newest first, each once. */
function readFeed(checkout: string): FeedInput {
  if (!existsSync(path.join(checkout, FEED_FILE))) {
    throw new UpdateError(`${path.join(checkout, FEED_FILE)}: missing (is ${checkout} a checkout of ${FEED_REPOSITORY}?)`);
  }
  const log = git(checkout, ['log', '--format=C %H', '--raw', '--no-abbrev', '--', FEED_FILE]);
  const commit = /^C ([0-9a-f]{40})$/m.exec(log)?.[1];
  if (!commit) throw new UpdateError(`${checkout}: no git commit for ${FEED_FILE}`);
  const blobs = [...log.matchAll(/^:\d+ \d+ [0-9a-f]{40} ([0-9a-f]{40}) [AM]\t/gm)].map((m) => m[1]!);
  return { commit, versions: [...new Set(blobs)].map((blob) => git(checkout, ['cat-file', 'blob', blob])) };
}

async function main(): Promise<void> {
  const [checkout, feedCheckout] = process.argv.slice(2);
  if (!checkout || !feedCheckout) {
    throw new UpdateError(
      `usage: npm run windows-updates:update -- <checkout of altrhombus/DataForGeeks> <checkout of ${FEED_REPOSITORY}>`,
    );
  }
  const file = path.join(checkout, DATA_FILE);
  if (!existsSync(file)) throw new UpdateError(`${file}: missing (is ${checkout} a checkout of altrhombus/DataForGeeks?)`);
  const commit = git(checkout, ['log', '-1', '--format=%H', '--', DATA_FILE]).trim();
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new UpdateError(`${checkout}: no git commit for ${DATA_FILE}`);
  const data = buildUpdateHistory(readFileSync(file, 'utf8'), commit, EXTRA_ROWS, readFeed(feedCheckout));
  const partial = `${TARGET}.${process.pid}.tmp`;
  writeFileSync(partial, await render(data));
  renameSync(partial, TARGET);
  console.log(`${path.relative(ROOT, TARGET)}: ${Object.keys(data.lines).length} lines, recorded through ${data.recordedThrough}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof UpdateError ? `windows-updates:update: ${err.message}` : err);
    process.exitCode = 1;
  });
}
