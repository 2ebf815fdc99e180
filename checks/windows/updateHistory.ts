// Release dates of Windows cumulative updates, per servicing line: the patch level (UBR) a machine
// reports, mapped to the day Microsoft released that update, for OS_VERSION's
// policy.osVersion.maxPatchAgeDays.WINDOWS (checks/windows/osVersion.ts).
//
// A recording, not an estimate: every row is a (build.UBR, release day) pair as Microsoft's update
// history pages list them (monthly "B" security releases, "D" previews, out-of-band releases),
// generated into updateHistoryData.ts by `npm run windows-updates:update -- <checkout of
// altrhombus/DataForGeeks> <checkout of ZentrixLabs/windows-version-feed>`
// (scripts/windows-updates-update.ts): the data set copies those pages; the feed's history of
// Microsoft's security update guide (CVRF: each KB's FixedBuild) gives the months after the data set;
// rows neither holds (Microsoft's release-information pages, and Patch Tuesdays from Microsoft's CVE
// records) are kept in that script with their sources. Each line's `sources` name
// where its rows come from. Rows start in January 2025 (March 2025 for 14393; 24H2 and Server 2025
// from their release in 2024-10 and 2024-11); an older UBR is judged as at least as old as a line's
// first row. UBRs grow with time within a line, so a UBR the table does not list (a hotpatch, an
// update of a month the table skipped) was released between its neighbours' dates.
//
// Keeping it current: UPDATE_HISTORY_RECORDED_THROUGH is the last release day the table covers (a
// line's newest row can be older where no source covered it). A UBR newer than a line's newest row was
// released after it: it passes while that row is itself within the policy's age, and is UNKNOWN
// `patch_table_outdated` after, until a newer agent brings newer rows. The refresh: run the script on
// newer checkouts of both, or, while both lag, add each Patch Tuesday's UBRs from
// Microsoft's CVE records to the script's EXTRA_ROWS (the steps are in its header) and run it again.
import type { WindowsRelease } from './osRelease';
import { UPDATE_HISTORY } from './updateHistoryData';

export const UPDATE_HISTORY_RECORDED_THROUGH: string = UPDATE_HISTORY.recordedThrough;

/** [UBR, availability date], ascending. */
type Row = readonly [ubr: number, released: string];

export interface UpdateLine {
  /** Evidence name of the line: the builds it serves. */
  name: string;
  rows: readonly Row[];
}

const { lines } = UPDATE_HISTORY;

const CLIENT_LINES: Record<number, UpdateLine> = {
  14393: { name: '14393', rows: lines.BUILD_14393.rows },
  17763: { name: '17763', rows: lines.BUILD_17763.rows },
  19044: { name: '19044/19045', rows: lines.BUILD_1904X.rows },
  19045: { name: '19044/19045', rows: lines.BUILD_1904X.rows },
  22621: { name: '22621/22631', rows: lines.BUILD_2262X.rows },
  22631: { name: '22621/22631', rows: lines.BUILD_2262X.rows },
  26100: { name: '26100', rows: lines.BUILD_26100.rows },
  26200: { name: '26200', rows: lines.BUILD_26200.rows },
};
const SERVER_LINES: Record<number, UpdateLine> = {
  14393: { name: '14393', rows: lines.BUILD_14393.rows },
  17763: { name: '17763', rows: lines.BUILD_17763.rows },
  20348: { name: '20348', rows: lines.BUILD_20348.rows },
  26100: { name: 'server-2025', rows: lines.SERVER_2025.rows },
};

/** The servicing line whose updates this release installs; null when the table has none (older or unreleased builds). */
export function updateLineFor(release: Pick<WindowsRelease, 'build' | 'family'>): UpdateLine | null {
  const lines = release.family === 'server' ? SERVER_LINES : release.family === 'client' ? CLIENT_LINES : null;
  return lines?.[release.build] ?? null;
}

/** When the installed update was released: exactly (a listed UBR), or between its listed neighbours' dates (null: unbounded). */
export type PatchRelease =
  { exact: true; released: string } | { exact: false; notBefore: string | null; notAfter: string | null; newestListed: string | null };

export function patchRelease(line: UpdateLine, ubr: number): PatchRelease {
  const row = line.rows.find(([u]) => u === ubr);
  if (row) return { exact: true, released: row[1] };
  const before = line.rows.filter(([u]) => u < ubr).at(-1);
  const after = line.rows.find(([u]) => u > ubr);
  const newest = line.rows.at(-1);
  return {
    exact: false,
    notBefore: before?.[1] ?? null,
    notAfter: after?.[1] ?? null,
    newestListed: after === undefined && newest ? `${newest[0]} (${newest[1]})` : null,
  };
}

/**
 * Whether a release day is Patch Tuesday (the second Tuesday of its month): the monthly security
 * update ("B") that Windows Update installs by itself. Previews ("D", fourth week) are optional
 * and out-of-band releases are offered to the machines they fix, so neither shows an updater failing.
 */
function patchTuesday(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`);
  return day.getUTCDay() === 2 && day.getUTCDate() >= 8 && day.getUTCDate() <= 14;
}

/** The first monthly security update of the line newer than the installed UBR, or null when the table lists none. */
export function nextSecurityUpdate(line: UpdateLine, ubr: number): { ubr: number; released: string } | null {
  const row = line.rows.find(([u, released]) => u > ubr && patchTuesday(released));
  return row ? { ubr: row[0], released: row[1] } : null;
}
