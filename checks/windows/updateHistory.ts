// Release dates of Windows cumulative updates, per servicing line: the patch level (UBR) a machine
// reports, mapped to the day Microsoft released that update, for OS_VERSION's
// policy.osVersion.maxPatchAgeDays.WINDOWS (checks/windows/osVersion.ts).
//
// A recording, not an estimate. Every row is a (build.UBR, availability date) pair as Microsoft's
// "Windows release information" / "update history" pages list it (monthly "B" security releases,
// "D" previews, out-of-band releases), taken from two repositories that copy those pages:
//   [A] Alitai12/Windows-Updatelist, one file per line scraped from
//       learn.microsoft.com/en-us/windows/release-health/release-information (Windows 10),
//       …/windows11-release-information and …/windows-server-release-info, rows through 2025-09;
//       file and commit named per line below.
//   [D] altrhombus/DataForGeeks content/ms/mswin/buildnumbers.json @ 009b40f (LastUpdatedUTC
//       2026-03-10; sources aka.ms/WindowsUpdateHistory, aka.ms/Windows11UpdateHistory and the
//       Windows Server 2022 update history page): every KB title "<date>—KB… (OS Build b.u)".
//   [C] from April 2026, the monthly security ("B") releases only: Microsoft's CVE records for that
//       Patch Tuesday in CVEProject/cvelistV5 (cves/2026/<n>xxx/CVE-2026-<n>.json, Microsoft as
//       CNA): `datePublic` is the release day and each product's `versionEndExcluding` the build of
//       that day's cumulative update (they match [D] for every month both cover). Previews and
//       out-of-band releases of these months are not listed (judged between their neighbours), nor
//       months no record covers for a line.
// Rows start in January 2025 (March 2025 for 14393; 24H2 and Server 2025 from their release in
// 2024-10 and 2024-11); an older UBR is judged as at least as old as a
// line's first row. UBRs grow with time within a line, so a UBR the table does not list (a hotpatch,
// an update of a month the table skipped) was released between its neighbours' dates.
//
// Keeping it current: UPDATE_HISTORY_RECORDED_THROUGH is the last release day the table covers
// (Patch Tuesday 2026-11-10; the newest row of a line can be older where no record covered it). A UBR newer than a line's newest row was released after it: it passes
// while that row is itself within the policy's age, and is UNKNOWN `patch_table_outdated` after,
// until a newer agent brings newer rows (append each month's rows from the pages above, with their
// source, and move the date).
import type { WindowsRelease } from './osRelease';

export const UPDATE_HISTORY_RECORDED_THROUGH = '2026-11-10';

/** [UBR, availability date], ascending. */
type Row = readonly [ubr: number, released: string];

export interface UpdateLine {
  /** Evidence name of the line: the builds it serves. */
  name: string;
  rows: readonly Row[];
}

/** Windows 10 1809 / LTSC 2019 / IoT LTSC 2019 / Server 2019. [A] "Windows Server 2019 17763.txt" @ 0ebbd08 through 2025-09, then [D], then [C]. */
const BUILD_17763: readonly Row[] = [
  [6775, '2025-01-14'],
  [6893, '2025-02-11'],
  [7009, '2025-03-11'],
  [7136, '2025-04-08'],
  [7240, '2025-04-11'],
  [7249, '2025-04-16'],
  [7314, '2025-05-13'],
  [7322, '2025-05-27'],
  [7434, '2025-06-10'],
  [7558, '2025-07-08'],
  [7678, '2025-08-12'],
  [7683, '2025-08-19'],
  [7792, '2025-09-09'],
  [7919, '2025-10-14'],
  [8027, '2025-11-11'],
  [8146, '2025-12-09'],
  [8148, '2025-12-18'],
  [8276, '2026-01-13'],
  [8280, '2026-01-17'],
  [8281, '2026-01-24'],
  [8389, '2026-02-10'],
  [8511, '2026-03-10'],
  // [C] CVE-2026-32215, -35417, -45653, -54114, -68880, -70285, -119856.
  [8644, '2026-04-14'],
  [8755, '2026-05-12'],
  [8880, '2026-06-09'],
  [9020, '2026-07-14'],
  [9245, '2026-09-08'],
  [9376, '2026-10-13'],
  [9487, '2026-11-10'],
];

/** Windows 10 22H2 (19045) and 21H2 / LTSC 2021 / IoT LTSC 2021 (19044): one KB each month. [A] "Windows 10 22H2 19045.txt" @ 4e4e6f1 through 2025-09, then [D], then [C]. */
const BUILD_1904X: readonly Row[] = [
  [5371, '2025-01-14'],
  [5440, '2025-01-28'],
  [5487, '2025-02-11'],
  [5555, '2025-02-25'],
  [5608, '2025-03-11'],
  [5679, '2025-03-25'],
  [5737, '2025-04-08'],
  [5796, '2025-04-22'],
  [5854, '2025-05-13'],
  [5856, '2025-05-19'],
  [5859, '2025-05-27'],
  [5917, '2025-05-28'],
  [5965, '2025-06-10'],
  [5968, '2025-06-16'],
  [6036, '2025-06-24'],
  [6093, '2025-07-08'],
  [6159, '2025-07-22'],
  [6216, '2025-08-12'],
  [6218, '2025-08-19'],
  [6282, '2025-08-26'],
  [6332, '2025-09-09'],
  [6396, '2025-09-25'],
  [6456, '2025-10-14'],
  [6466, '2025-11-11'],
  [6575, '2025-11-11'],
  [6691, '2025-12-09'],
  [6693, '2025-12-18'],
  [6809, '2026-01-13'],
  [6811, '2026-01-17'],
  [6812, '2026-01-24'],
  [6937, '2026-02-10'],
  [7058, '2026-03-10'],
  // [C] CVE-2026-32181, -35417, -45653, -54114, -68880.
  [7184, '2026-04-14'],
  [7291, '2026-05-12'],
  [7417, '2026-06-09'],
  [7548, '2026-07-14'],
  [7725, '2026-09-08'],
];

/** Windows Server 2016 / LTSB 2016. [D] (rows from 2025-03), then [C]. */
const BUILD_14393: readonly Row[] = [
  [7876, '2025-03-11'],
  [7969, '2025-04-08'],
  [7973, '2025-04-11'],
  [8066, '2025-05-13'],
  [8148, '2025-06-10'],
  [8246, '2025-07-08'],
  [8330, '2025-08-12'],
  [8422, '2025-09-09'],
  [8519, '2025-10-14'],
  [8594, '2025-11-11'],
  [8688, '2025-12-09'],
  [8692, '2025-12-18'],
  [8783, '2026-01-13'],
  [8868, '2026-02-10'],
  [8957, '2026-03-10'],
  // [C] CVE-2026-45653, -68880, -70111, -119856.
  [9234, '2026-06-09'],
  [9512, '2026-09-08'],
  [9612, '2026-10-13'],
  [9688, '2026-11-10'],
];

/** Windows Server 2022. [A] "Windows Server 2022 20348.txt" @ 50a88c3 through 2025-08, then [D], then [C]. */
const BUILD_20348: readonly Row[] = [
  [3091, '2025-01-14'],
  [3095, '2025-01-18'],
  [3207, '2025-02-11'],
  [3328, '2025-03-11'],
  [3453, '2025-04-08'],
  [3561, '2025-04-11'],
  [3566, '2025-04-16'],
  [3692, '2025-05-13'],
  [3695, '2025-05-23'],
  [3807, '2025-06-10'],
  [3932, '2025-07-08'],
  [4052, '2025-08-12'],
  [4171, '2025-09-09'],
  [4294, '2025-10-14'],
  [4297, '2025-10-23'],
  [4405, '2025-11-11'],
  [4529, '2025-12-09'],
  [4648, '2026-01-13'],
  [4650, '2026-01-17'],
  [4651, '2026-01-24'],
  [4773, '2026-02-10'],
  [4776, '2026-03-02'],
  [4893, '2026-03-10'],
  // [C] CVE-2026-32181, -35417, -45653, -54114, -68880, -70285.
  [5020, '2026-04-14'],
  [5139, '2026-05-12'],
  [5256, '2026-06-09'],
  [5386, '2026-07-14'],
  [5622, '2026-09-08'],
  [5761, '2026-10-13'],
];

/** Windows 11 22H2 (22621, until its end in 2025-10) and 23H2 (22631). [A] "Windows 11 23H2 22631.txt" @ 4cafca1 through 2025-08, then [D], then [C]. */
const BUILD_2262X: readonly Row[] = [
  [4751, '2025-01-14'],
  [4830, '2025-01-29'],
  [4890, '2025-02-11'],
  [4974, '2025-02-25'],
  [5039, '2025-03-11'],
  [5126, '2025-03-25'],
  [5189, '2025-04-08'],
  [5192, '2025-04-11'],
  [5262, '2025-04-22'],
  [5335, '2025-05-13'],
  [5413, '2025-05-27'],
  [5415, '2025-05-31'],
  [5472, '2025-06-10'],
  [5549, '2025-06-26'],
  [5624, '2025-07-08'],
  [5699, '2025-07-22'],
  [5768, '2025-08-12'],
  [5771, '2025-08-19'],
  [5840, '2025-08-26'],
  [5909, '2025-09-09'],
  [5984, '2025-09-23'],
  [6060, '2025-10-14'],
  [6133, '2025-10-28'],
  [6199, '2025-11-11'],
  [6276, '2025-11-20'],
  [6345, '2025-12-09'],
  [6491, '2026-01-13'],
  [6494, '2026-01-17'],
  [6495, '2026-01-24'],
  [6649, '2026-02-10'],
  [6783, '2026-03-10'],
  // [C] CVE-2026-32181, -35417, -45653, -68880.
  [6936, '2026-04-14'],
  [7079, '2026-05-12'],
  [7219, '2026-06-09'],
  [7582, '2026-09-08'],
];

/** Windows 11 24H2 and 25H2 share every cumulative update from 2025-10 ("OS Builds 26200.x and 26100.x"); [D], then [C]. */
const SHARED_24H2_25H2: readonly Row[] = [
  [6899, '2025-10-14'],
  [6901, '2025-10-20'],
  [7019, '2025-10-28'],
  [7171, '2025-11-11'],
  [7309, '2025-12-01'],
  [7462, '2025-12-09'],
  [7623, '2026-01-13'],
  [7627, '2026-01-17'],
  [7628, '2026-01-24'],
  [7705, '2026-01-29'],
  [7840, '2026-02-10'],
  [7922, '2026-02-24'],
  [8037, '2026-03-10'],
  // [C] CVE-2026-32181, -35417, -45653, -54114, -62708, -68880, -85837.
  [8246, '2026-04-14'],
  [8457, '2026-05-12'],
  [8655, '2026-06-09'],
  [8875, '2026-07-14'],
  [9168, '2026-08-11'],
  [9445, '2026-09-08'],
  [9711, '2026-10-13'],
];

/** Windows 11 24H2, Enterprise LTSC 2024, IoT Enterprise LTSC 2024. [A] "Windows 11 24H2 26100.txt" @ 6897ea6 through 2025-09, then [D]. */
const BUILD_26100: readonly Row[] = [
  [1742, '2024-10-01'],
  [2033, '2024-10-08'],
  [2161, '2024-10-24'],
  [2314, '2024-11-12'],
  [2454, '2024-11-21'],
  [2605, '2024-12-10'],
  [2894, '2025-01-14'],
  [3037, '2025-01-28'],
  [3194, '2025-02-11'],
  [3323, '2025-02-25'],
  [3476, '2025-03-11'],
  [3624, '2025-03-27'],
  [3775, '2025-04-08'],
  [3915, '2025-04-25'],
  [4061, '2025-05-13'],
  [4066, '2025-05-27'],
  [4202, '2025-05-28'],
  [4349, '2025-06-10'],
  [4351, '2025-06-11'],
  [4484, '2025-06-26'],
  [4652, '2025-07-08'],
  [4656, '2025-07-13'],
  [4770, '2025-07-22'],
  [4946, '2025-08-12'],
  [5074, '2025-08-29'],
  [6584, '2025-09-09'],
  [6588, '2025-09-22'],
  [6725, '2025-09-29'],
  ...SHARED_24H2_25H2,
];

/** Windows 11 25H2: released 2025-09-30 at 26200.6584 ([A] "Windows 11 24H2 26200.txt" @ e3aa85d), then the shared updates. */
const BUILD_26200: readonly Row[] = [[6584, '2025-09-30'], ...SHARED_24H2_25H2];

/**
 * Windows Server 2025: the 24H2 updates until 2025-12 ([A] "Windows Server 2025 26100.txt" @ 28bfe32
 * through 2025-09, then the [D] titles naming 26100 alone), its own numbering (26100.32xxx) from 2026-01 ([D], then [C]).
 */
const SERVER_2025: readonly Row[] = [
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
  [6899, '2025-10-14'],
  [6901, '2025-10-20'],
  [6905, '2025-10-23'],
  [7171, '2025-11-11'],
  [7178, '2025-11-18'],
  [7462, '2025-12-09'],
  [32230, '2026-01-13'],
  [32234, '2026-01-17'],
  [32236, '2026-01-24'],
  [32370, '2026-02-10'],
  [32522, '2026-03-10'],
  // [C] CVE-2026-32181, -35417, -45653, -54114, -62708, -68880, -85837.
  [32690, '2026-04-14'],
  [32860, '2026-05-12'],
  [32995, '2026-06-09'],
  [33158, '2026-07-14'],
  [33296, '2026-08-11'],
  [33438, '2026-09-08'],
  [33650, '2026-10-13'],
];

const CLIENT_LINES: Record<number, UpdateLine> = {
  14393: { name: '14393', rows: BUILD_14393 },
  17763: { name: '17763', rows: BUILD_17763 },
  19044: { name: '19044/19045', rows: BUILD_1904X },
  19045: { name: '19044/19045', rows: BUILD_1904X },
  22621: { name: '22621/22631', rows: BUILD_2262X },
  22631: { name: '22621/22631', rows: BUILD_2262X },
  26100: { name: '26100', rows: BUILD_26100 },
  26200: { name: '26200', rows: BUILD_26200 },
};
const SERVER_LINES: Record<number, UpdateLine> = {
  14393: { name: '14393', rows: BUILD_14393 },
  17763: { name: '17763', rows: BUILD_17763 },
  20348: { name: '20348', rows: BUILD_20348 },
  26100: { name: 'server-2025', rows: SERVER_2025 },
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
