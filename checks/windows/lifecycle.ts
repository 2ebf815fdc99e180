// Release cycles and support end dates for the default OS_VERSION policy. Windows is serviced per
// feature update *and* edition group (research §5.5), so each group is its own product:
//   home-pro: Home, Pro, Pro Education, Pro for Workstations, SE ("(W)" on endoflife.date)
//   enterprise-education: Enterprise, Education, IoT Enterprise ("(E)")
//   ltsc / iot-ltsc: Enterprise LTSC and IoT Enterprise LTSC (cycle = the LTSC year)
//   windows-server: Long-Term Servicing Channel years and the 23H2 Annual Channel.
// Sources: endoflife-date/endoflife.date products/windows.md @ ed9e2eb and products/windows-server.md
// @ 027c7cc (dates from Microsoft's release-information pages), research §5.4 for build numbers;
// Windows 11 25H2 (build 26200, released 2025-09-30): 24 months Home/Pro, 36 months Enterprise/Education.
// `eol` is the end of security updates (for LTSC: end of extended support); `extendedEnd` is the
// last Extended Security Updates date, counted only with policy.osVersion.acceptExtendedSupport.windowsEsu.
// 26H1 (28000) and 26H2 (26300) are unverified (research §12) and deliberately absent: UNKNOWN.
import type { LifecycleCycle, LifecycleTable } from '../lifecycleTable';

const windows11 = (group: 'home-pro' | 'enterprise-education'): LifecycleCycle[] => {
  const e = group === 'enterprise-education';
  return [
    { cycle: '21H2', releaseDate: '2021-10-04', eol: e ? '2024-10-08' : '2023-10-10' },
    { cycle: '22H2', releaseDate: '2022-09-20', eol: e ? '2025-10-14' : '2024-10-08' },
    { cycle: '23H2', releaseDate: '2023-10-31', eol: e ? '2026-11-10' : '2025-11-11' },
    { cycle: '24H2', releaseDate: '2024-10-01', eol: e ? '2027-10-12' : '2026-10-13' },
    { cycle: '25H2', releaseDate: '2025-09-30', eol: e ? '2028-10-10' : '2027-10-12' },
  ];
};

/** Windows 10 22H2 ESU: businesses up to three years (2028-10-10); Home only the consumer year (2026-10-13). */
const windows10 = (group: 'home' | 'pro' | 'enterprise-education'): LifecycleCycle[] => {
  const e = group === 'enterprise-education';
  return [
    { cycle: '1809', releaseDate: '2018-11-13', eol: e ? '2021-05-11' : '2020-11-10' },
    { cycle: '1903', releaseDate: '2019-05-21', eol: '2020-12-08' },
    { cycle: '1909', releaseDate: '2019-11-12', eol: e ? '2022-05-10' : '2021-05-11' },
    { cycle: '2004', releaseDate: '2020-05-27', eol: '2021-12-14' },
    { cycle: '20H2', releaseDate: '2020-10-20', eol: e ? '2023-05-09' : '2022-05-10' },
    { cycle: '21H1', releaseDate: '2021-05-18', eol: '2022-12-13' },
    { cycle: '21H2', releaseDate: '2021-11-16', eol: e ? '2024-06-11' : '2023-06-13' },
    { cycle: '22H2', releaseDate: '2022-10-18', eol: '2025-10-14', extendedEnd: group === 'home' ? '2026-10-13' : '2028-10-10' },
  ];
};

export const windowsLifecycle: LifecycleTable = {
  'windows-11-home-pro': windows11('home-pro'),
  'windows-11-enterprise-education': windows11('enterprise-education'),
  'windows-11-ltsc': [{ cycle: '2024', releaseDate: '2024-10-01', eol: '2029-10-09' }],
  'windows-11-iot-ltsc': [{ cycle: '2024', releaseDate: '2024-10-01', eol: '2034-10-10' }],
  'windows-10-home': windows10('home'),
  'windows-10-pro': windows10('pro'),
  'windows-10-enterprise-education': windows10('enterprise-education'),
  'windows-10-ltsc': [
    { cycle: '2015', releaseDate: '2015-07-29', eol: '2025-10-14' },
    { cycle: '2016', releaseDate: '2016-08-02', eol: '2026-10-13' },
    { cycle: '2019', releaseDate: '2018-11-13', eol: '2029-01-09' },
    { cycle: '2021', releaseDate: '2021-11-16', eol: '2027-01-12' },
  ],
  'windows-10-iot-ltsc': [
    { cycle: '2019', releaseDate: '2018-11-13', eol: '2029-01-09' },
    { cycle: '2021', releaseDate: '2021-11-16', eol: '2032-01-13' },
  ],
  'windows-server': [
    { cycle: '2016', releaseDate: '2016-10-15', eol: '2027-01-12', extendedEnd: '2030-01-12' },
    { cycle: '2019', releaseDate: '2018-11-13', eol: '2029-01-09' },
    { cycle: '2022', releaseDate: '2021-08-18', eol: '2031-10-14' },
    { cycle: '23H2', releaseDate: '2023-10-24', eol: '2025-10-24' },
    { cycle: '2025', releaseDate: '2024-11-01', eol: '2034-10-10' },
  ],
};
