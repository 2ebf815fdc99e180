// macOS release cycles and support ends for the default OS_VERSION policy. Source: endoflife.date
// products/macos.md (page of 2026-03; Apple publishes no end dates, so an "eol" is the day the
// cycle stopped getting security updates, set when the next major shipped). Apple usually patches
// the latest three majors. Kept current by hand from that page when a major ships (docs/checks/
// // darwin.md, "Keeping the lifecycle table current"). A major newer than every listed one can only be
// the current release: PASS newer_than_table (release.ts orderedCycles), without a patch-lag test;
// a major older than every listed one is FAIL older_than_table.
import type { LifecycleTable } from '../lifecycleTable';

export const darwinLifecycle: LifecycleTable = {
  macos: [
    { cycle: '26', releaseDate: '2025-09-15', eol: false, latest: '26.3.1', latestReleaseDate: '2026-03-04' },
    { cycle: '15', releaseDate: '2024-09-16', eol: false, latest: '15.7.4', latestReleaseDate: '2026-02-11' },
    { cycle: '14', releaseDate: '2023-09-26', eol: false, latest: '14.8.4', latestReleaseDate: '2026-02-11' },
    { cycle: '13', releaseDate: '2022-10-24', eol: '2025-09-15', latest: '13.7.8', latestReleaseDate: '2025-08-20' },
    { cycle: '12', releaseDate: '2021-10-25', eol: '2024-09-16', latest: '12.7.6', latestReleaseDate: '2024-07-29' },
    { cycle: '11', releaseDate: '2020-11-12', eol: '2023-09-26', latest: '11.7.11', latestReleaseDate: '2026-02-02' },
    { cycle: '10.15', releaseDate: '2019-10-07', eol: '2022-09-12', latest: '10.15.7', latestReleaseDate: '2020-09-24' },
    { cycle: '10.14', releaseDate: '2018-09-24', eol: '2021-10-25', latest: '10.14.6', latestReleaseDate: '2019-07-22' },
    { cycle: '10.13', releaseDate: '2017-09-25', eol: '2020-12-01', latest: '10.13.6', latestReleaseDate: '2018-07-09' },
  ],
};
