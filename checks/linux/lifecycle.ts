// Release cycles and support end dates for the default OS_VERSION policy, keyed by the product
// names checks/linux/osVersion.ts maps os-release IDs to. Sources: endoflife.date product pages
// (debian, ubuntu, rhel, rocky-linux, almalinux, fedora, alpine-linux, opensuse); the Debian release
// wiki for Debian 13; the Debian LTS schedule for LTS ends (Debian 12: 2028-06-30, as Lynis has it,
// where endoflife.date gives the release anniversary 2028-06-10); Red Hat's and the rebuilds'
// announcements for the 10 series. `eol` is the end of regular security support; `extendedEnd` is
// Debian LTS, Ubuntu ESM or RHEL ELS, counted only when the policy accepts that kind of extended
// support. Checked at LIFECYCLE_CHECKED_AT (checks/policy.ts); administrators extend or replace it
// in their policy file.
import type { LifecycleTable } from '../lifecycleTable';

export const linuxLifecycle: LifecycleTable = {
  debian: [
    { cycle: '13', releaseDate: '2025-08-09', eol: '2028-08-09', extendedEnd: '2030-06-30' },
    {
      cycle: '12',
      releaseDate: '2023-06-10',
      eol: '2026-06-10',
      extendedEnd: '2028-06-30',
      latest: '12.11',
      latestReleaseDate: '2025-05-17',
    },
    {
      cycle: '11',
      releaseDate: '2021-08-14',
      eol: '2024-08-14',
      extendedEnd: '2026-08-31',
      latest: '11.11',
      latestReleaseDate: '2024-08-31',
    },
    {
      cycle: '10',
      releaseDate: '2019-07-06',
      eol: '2022-09-10',
      extendedEnd: '2024-06-30',
      latest: '10.13',
      latestReleaseDate: '2022-09-10',
    },
  ],
  ubuntu: [
    { cycle: '26.04', releaseDate: '2026-04-23', eol: '2031-04-30', extendedEnd: '2036-04-30' },
    { cycle: '25.10', releaseDate: '2025-10-09', eol: '2026-07-01' },
    { cycle: '25.04', releaseDate: '2025-04-17', eol: '2026-01-17' },
    { cycle: '24.10', releaseDate: '2024-10-10', eol: '2025-07-10' },
    {
      cycle: '24.04',
      releaseDate: '2024-04-25',
      eol: '2029-05-31',
      extendedEnd: '2036-05-31',
      latest: '24.04.4',
      latestReleaseDate: '2026-02-12',
    },
    { cycle: '23.10', releaseDate: '2023-10-12', eol: '2024-07-12' },
    { cycle: '23.04', releaseDate: '2023-04-20', eol: '2024-01-20' },
    {
      cycle: '22.04',
      releaseDate: '2022-04-21',
      eol: '2027-04-01',
      extendedEnd: '2032-04-09',
      latest: '22.04.5',
      latestReleaseDate: '2024-09-12',
    },
    {
      cycle: '20.04',
      releaseDate: '2020-04-23',
      eol: '2025-05-31',
      extendedEnd: '2030-04-02',
      latest: '20.04.6',
      latestReleaseDate: '2023-03-23',
    },
    {
      cycle: '18.04',
      releaseDate: '2018-04-26',
      eol: '2023-05-31',
      extendedEnd: '2028-04-01',
      latest: '18.04.6',
      latestReleaseDate: '2021-09-17',
    },
    {
      cycle: '16.04',
      releaseDate: '2016-04-21',
      eol: '2021-04-02',
      extendedEnd: '2026-04-02',
      latest: '16.04.7',
      latestReleaseDate: '2020-08-13',
    },
  ],
  rhel: [
    { cycle: '10', releaseDate: '2025-05-20', eol: '2035-05-31' },
    { cycle: '9', releaseDate: '2022-05-18', eol: '2032-05-31', extendedEnd: '2035-05-31', latest: '9.5', latestReleaseDate: '2024-11-12' },
    {
      cycle: '8',
      releaseDate: '2019-05-07',
      eol: '2029-05-31',
      extendedEnd: '2032-05-31',
      latest: '8.10',
      latestReleaseDate: '2024-05-22',
    },
    { cycle: '7', releaseDate: '2014-06-10', eol: '2024-06-30', extendedEnd: '2028-06-30', latest: '7.9', latestReleaseDate: '2020-09-29' },
  ],
  rocky: [
    { cycle: '10', releaseDate: '2025-06-11', eol: '2035-05-31' },
    { cycle: '9', releaseDate: '2022-07-14', eol: '2032-05-31', latest: '9.6', latestReleaseDate: '2025-06-04' },
    { cycle: '8', releaseDate: '2021-05-01', eol: '2029-05-31', latest: '8.10', latestReleaseDate: '2024-05-31' },
  ],
  almalinux: [
    { cycle: '10', releaseDate: '2025-05-27', eol: '2035-05-31', latest: '10.0', latestReleaseDate: '2025-05-27' },
    { cycle: '9', releaseDate: '2022-05-26', eol: '2032-05-31', latest: '9.6', latestReleaseDate: '2025-05-20' },
    { cycle: '8', releaseDate: '2021-03-30', eol: '2029-03-01', latest: '8.10', latestReleaseDate: '2024-05-28' },
  ],
  centos: [
    { cycle: '8', releaseDate: '2019-09-24', eol: '2021-12-31' },
    { cycle: '7', releaseDate: '2014-07-07', eol: '2024-06-30' },
  ],
  'centos-stream': [
    { cycle: '9', releaseDate: '2021-12-03', eol: '2027-05-31' },
    { cycle: '8', releaseDate: '2019-09-24', eol: '2024-05-31' },
  ],
  fedora: [
    { cycle: '43', releaseDate: '2025-10-28', eol: '2026-12-09' },
    { cycle: '42', releaseDate: '2025-04-15', eol: '2026-05-13' },
    { cycle: '41', releaseDate: '2024-10-29', eol: '2025-12-15' },
    { cycle: '40', releaseDate: '2024-04-23', eol: '2025-05-13' },
    { cycle: '39', releaseDate: '2023-11-07', eol: '2024-11-26' },
  ],
  alpine: [
    { cycle: '3.23', releaseDate: '2025-12-04', eol: '2027-11-01', latest: '3.23.3', latestReleaseDate: '2026-01-27' },
    { cycle: '3.22', releaseDate: '2025-05-30', eol: '2027-05-01', latest: '3.22.3', latestReleaseDate: '2026-01-27' },
    { cycle: '3.21', releaseDate: '2024-12-05', eol: '2026-11-01', latest: '3.21.6', latestReleaseDate: '2026-01-27' },
    { cycle: '3.20', releaseDate: '2024-05-22', eol: '2026-04-01', latest: '3.20.9', latestReleaseDate: '2026-01-27' },
    { cycle: '3.19', releaseDate: '2023-12-07', eol: '2025-11-01', latest: '3.19.9', latestReleaseDate: '2025-10-08' },
    { cycle: '3.18', releaseDate: '2023-05-09', eol: '2025-05-09', latest: '3.18.12', latestReleaseDate: '2025-02-14' },
  ],
  'opensuse-leap': [
    { cycle: '16.0', releaseDate: '2025-10-01', eol: '2027-10-31' },
    { cycle: '15.6', releaseDate: '2024-06-12', eol: '2026-04-30' },
    { cycle: '15.5', releaseDate: '2023-06-07', eol: '2024-12-31' },
  ],
  // Rolling releases never reach an end of life; OS_VERSION judges how recently they were upgraded.
  arch: [{ cycle: 'rolling', eol: false }],
  'opensuse-tumbleweed': [{ cycle: 'rolling', eol: false }],
};
