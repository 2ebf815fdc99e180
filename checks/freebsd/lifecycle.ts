// Release cycles and support end dates for the default OS_VERSION policy, from
// endoflife.date products/freebsd.md and the research (§5.5, facts as of 2026-11-21).
// "freebsd" holds point releases (releng/X.Y: supported until three months after the next
// point release); "freebsd-stable" holds the stable/X branches that -STABLE builds follow.
// Releases after 14.3 follow the release engineering plan that fixes each point release's
// expected end (Colin Percival, freebsd-announce, July 2024, as phoronix.com/news/FreeBSD-More-Releases
// reproduces it; the stable/15 end from his 15.0 schedule, freebsd-stable 2025-04-15): 14.4 out
// 2026-03-10, to 2026-12-31; 15.1 (June 2026) to 2027-03-31; 14.5 (September 2026) to 2027-06-30;
// 15.2 (December 2026) to 2027-09-30. A release date the plan gives only as a month is left out.
import type { LifecycleCycle, LifecycleTable } from '../lifecycleTable';

const release = (cycle: string, releaseDate: string | undefined, eol: string | false): LifecycleCycle =>
  releaseDate === undefined ? { cycle, eol } : { cycle, releaseDate, eol };

export const freebsdLifecycle: LifecycleTable = {
  freebsd: [
    release('15.2', undefined, '2027-09-30'),
    release('14.5', undefined, '2027-06-30'),
    release('15.1', undefined, '2027-03-31'),
    release('14.4', '2026-03-10', '2026-12-31'),
    release('15.0', '2025-12-02', '2026-09-30'),
    release('14.3', '2025-06-10', '2026-06-30'),
    release('13.5', '2025-03-11', '2026-04-30'),
    release('14.2', '2024-12-03', '2025-09-30'),
    release('13.4', '2024-09-17', '2025-06-30'),
    release('14.1', '2024-06-04', '2025-03-31'),
    release('13.3', '2024-03-05', '2024-12-31'),
    release('14.0', '2023-11-20', '2024-09-30'),
    release('13.2', '2023-04-11', '2024-06-30'),
    release('12.4', '2022-12-05', '2023-12-31'),
    release('13.1', '2022-05-16', '2023-07-31'),
    release('12.3', '2021-12-07', '2023-03-31'),
    release('13.0', '2021-04-13', '2022-08-31'),
    release('12.2', '2020-10-27', '2022-03-31'),
    release('11.4', '2020-06-16', '2021-09-30'),
    release('12.1', '2019-11-04', '2021-01-31'),
    release('11.3', '2019-07-09', '2020-09-30'),
    release('12.0', '2018-12-11', '2020-02-29'),
    release('11.2', '2018-06-28', '2019-10-31'),
    release('10.4', '2017-10-03', '2018-10-31'),
    release('11.1', '2017-07-26', '2018-09-30'),
    release('11.0', '2016-10-10', '2017-11-30'),
    release('10.3', '2016-04-04', '2018-04-30'),
    release('10.2', '2015-08-13', '2016-12-31'),
    release('10.1', '2014-11-14', '2016-12-31'),
    release('10.0', '2014-01-20', '2015-02-28'),
  ],
  'freebsd-stable': [
    release('15', '2025-12-02', '2029-12-31'),
    release('14', '2023-11-20', '2028-11-30'),
    release('13', '2021-04-13', '2026-04-30'),
    release('12', '2018-12-11', '2023-12-31'),
    release('11', '2016-10-10', '2021-09-30'),
    release('10', '2014-01-20', '2018-10-31'),
  ],
};
