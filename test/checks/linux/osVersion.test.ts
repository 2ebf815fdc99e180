// OS_VERSION on Linux, evaluator by evaluator, on real /etc/os-release files (chef/os_release, the
// corpus of osReleaseCorpus.test.ts): what the evidence names (the release's own fields, the base a
// derivative declares and which field declared it), how rolling releases are dated, and the
// policy's minimum. The corpus test pins the verdicts; this pins the words beside them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { osVersion } from '../../../checks/linux/osVersion';
import { resolvePolicy } from '../../../checks/policy';
import { createContext } from '../../../checks/engine';
import { FakeHost, type HostRecording } from '../../support/fakeHost';
import { linuxLifecycle } from '../../../checks/linux/lifecycle';

const NOW = new Date('2026-11-21T12:00:00Z');
const corpus = (file: string) => readFileSync(new URL(`../../fixtures/os-release/chef-os_release/${file}`, import.meta.url), 'utf8');

async function judge(osRelease: string, more: HostRecording = {}, policy = resolvePolicy({})) {
  const host = new FakeHost({ ...more, files: { '/etc/os-release': osRelease, ...more.files } });
  return osVersion.evaluate(await osVersion.collect(createContext(host, policy, NOW)), policy, NOW);
}

describe('the release in the evidence', () => {
  it('names the fields it read: ID, VERSION_ID, codename, the Debian point release, the kernel, a pending reboot', async () => {
    const verdict = await judge(corpus('debian_12'), {
      files: { '/etc/debian_version': '12.11\n', '/proc/sys/kernel/osrelease': '6.1.0-37-amd64\n' },
      stats: { '/var/run/reboot-required': {} },
    });
    expect(verdict.evidence).toEqual({
      product: 'debian',
      cycle: '12',
      version: '12.11',
      source: 'os-release',
      id: 'debian',
      version_id: '12',
      point_release: '12.11',
      codename: 'bookworm',
      kernel: '6.1.0-37-amd64',
      reboot_required: true,
      lifecycle_checked_at: '2026-08-22',
      eol: '2026-07-11',
      extended_end: '2028-06-30',
      extended_support: 'Debian LTS',
      extended_support_setting: 'osVersion.acceptExtendedSupport.debianLts',
      extended_support_accepted: false,
      rule: 'extended_support_not_accepted',
    });
  });

  it('says nothing of what it did not read', async () => {
    const { evidence } = await judge(corpus('alpine_3_8'));
    expect(evidence).not.toHaveProperty('codename');
    expect(evidence).not.toHaveProperty('id_like');
    expect(evidence).not.toHaveProperty('point_release');
    expect(evidence).not.toHaveProperty('kernel');
    expect(evidence).not.toHaveProperty('reboot_required');
    // A point release newer than the cycle (3.8.5 of 3.8) is the version judged.
    expect(evidence).toMatchObject({ id: 'alpine', version_id: '3.8.5', cycle: '3.8', version: '3.8.5', rule: 'eol' });
  });

  it('judges a point release below its cycle by the cycle, and a precise VERSION within it', async () => {
    // Rocky Linux 9.3: VERSION_ID 9.3 in cycle 9, version 9.3; Scientific Linux 7.5 is derived: the base's cycle.
    expect((await judge(corpus('rocky_9'))).evidence).toMatchObject({ product: 'rocky', cycle: '9', version: '9.3' });
    expect((await judge(corpus('scientific_7'))).evidence).toMatchObject({ product: 'rhel', cycle: '7', version: '7' });
  });

  it('reports an unreadable os-release as permission_denied, a missing one as unrecognized_version', async () => {
    const host = new FakeHost({ files: { '/etc/os-release': { error: 'permission_denied' } } });
    const policy = resolvePolicy({});
    const denied = osVersion.evaluate(await osVersion.collect(createContext(host, policy, NOW)), policy, NOW);
    expect(denied).toEqual({ status: 'UNKNOWN', evidence: { reason: 'permission_denied', source: 'os-release' } });
    const missing = osVersion.evaluate(await osVersion.collect(createContext(new FakeHost({}), policy, NOW)), policy, NOW);
    expect(missing).toEqual({ status: 'UNKNOWN', evidence: { reason: 'unrecognized_version', source: 'os-release' } });
  });

  it('FAILs below the policy minimum for its ID', async () => {
    const policy = resolvePolicy({ osVersion: { minimum: { LINUX: { rocky: '9.4' } } } });
    expect(await judge(corpus('rocky_9'), {}, policy)).toMatchObject({ status: 'FAIL', evidence: { rule: 'minimum', minimum: '9.4' } });
    // Another ID's minimum does not apply.
    const other = resolvePolicy({ osVersion: { minimum: { LINUX: { alma: '9.4' } } } });
    expect((await judge(corpus('rocky_9'), {}, other)).evidence.rule).toBe('supported');
  });
});

describe('derivation', () => {
  it('names the base beside a distribution judged by its own row', async () => {
    expect((await judge(corpus('linuxmint_22'))).evidence).toMatchObject({
      product: 'linuxmint',
      cycle: '22',
      base_product: 'ubuntu',
      base_cycle: '24.04',
    });
    const own = await judge(corpus('centos_stream_9'));
    expect(own.evidence).toMatchObject({ product: 'centos-stream', cycle: '9', base_product: 'rhel', base_cycle: '9' });
    expect(own.evidence).not.toHaveProperty('derived_from');
  });

  it('judges a distribution without its own row by the base it declares, naming the field', async () => {
    expect((await judge(corpus('elementary_7'))).evidence).toMatchObject({
      product: 'ubuntu',
      cycle: '22.04',
      version: '22.04',
      distribution: 'elementary',
      derived_from: 'UBUNTU_CODENAME',
    });
    expect((await judge(corpus('nobara'))).evidence).toMatchObject({ product: 'fedora', cycle: '40', derived_from: 'PLATFORM_ID' });
    expect((await judge(corpus('virtuozzo_7'))).evidence).toMatchObject({ product: 'rhel', cycle: '7', derived_from: 'ID_LIKE' });
    expect((await judge(corpus('raspbian_10'))).evidence).toMatchObject({
      product: 'debian',
      cycle: '10',
      derived_from: 'VERSION_CODENAME',
    });
  });

  it('gives a derivative no extended support of its base: the base ended, the derivative did', async () => {
    const raspbian = await judge(corpus('raspbian_10'), {}, resolvePolicy({ osVersion: { acceptExtendedSupport: { debianLts: true } } }));
    expect(raspbian.evidence).not.toHaveProperty('extended_support');
    // Debian itself, same policy: LTS named and accepted.
    const debian = await judge(corpus('debian_12'), {}, resolvePolicy({ osVersion: { acceptExtendedSupport: { debianLts: true } } }));
    expect(debian).toMatchObject({ status: 'PASS', evidence: { rule: 'extended_support', extended_support_accepted: true } });
  });

  it('files IDs under the product the table names them by', async () => {
    expect((await judge(corpus('sled_15'))).evidence).toMatchObject({ id: 'sled', product: 'sles', cycle: '15.0' });
    expect((await judge(corpus('xcp-ng_8'))).evidence).toMatchObject({ id: 'xenenterprise', product: 'xcp-ng', cycle: '8.2' });
  });
});

describe('rolling releases', () => {
  it('are judged by the newest change of any package database present', async () => {
    const arch = await judge(corpus('arch'), {
      stats: {
        '/var/lib/pacman/local': { isDirectory: true, mtime: '2026-11-01T08:00:00Z' },
        '/var/lib/dpkg/status': { mtime: '2026-06-01T08:00:00Z' },
      },
    });
    expect(arch).toEqual({
      status: 'PASS',
      evidence: {
        source: 'os-release',
        id: 'arch',
        // chef's file keeps its template's placeholder.
        version_id: 'TEMPLATE_VERSION_ID',
        product: 'arch',
        cycle: 'rolling',
        version: 'rolling',
        rolling_by: 'ID',
        package_manager: 'pacman',
        last_upgrade_age_days: 20,
        rolling_max_age_days: 90,
        rule: 'supported',
      },
    });
    const stale = await judge(corpus('endeavouros'), {
      stats: { '/var/lib/pacman/local': { isDirectory: true, mtime: '2026-05-01T08:00:00Z' } },
    });
    expect(stale).toMatchObject({ status: 'FAIL', evidence: { rolling_by: 'ID_LIKE', last_upgrade_age_days: 204, rule: 'rolling_stale' } });
    const lenient = resolvePolicy({ osVersion: { rollingMaxAgeDays: 365 } });
    const accepted = await judge(corpus('endeavouros'), { stats: { '/var/lib/pacman/local': { mtime: '2026-05-01T08:00:00Z' } } }, lenient);
    expect(accepted.evidence).toMatchObject({ rolling_max_age_days: 365, rule: 'supported' });
  });

  it('takes the newest database when several are present, and UNKNOWN when none is', async () => {
    const newest = await judge(corpus('gentoo_218'), {
      stats: {
        '/var/db/pkg': { isDirectory: true, mtime: '2026-10-01T00:00:00Z' },
        '/usr/lib/sysimage/rpm': { mtime: '2026-11-20T00:00:00Z' },
      },
    });
    expect(newest.evidence).toMatchObject({ package_manager: 'rpm', last_upgrade_age_days: 1 });
    expect(await judge(corpus('gentoo_218'))).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'update_age_unknown', rolling_by: 'ID' },
    });
  });

  it('dates openSUSE Tumbleweed by its snapshot, not a package database', async () => {
    const tw = await judge(corpus('opensusetumbleweed'), { stats: { '/var/lib/rpm': { mtime: '2026-11-20T00:00:00Z' } } });
    expect(tw.evidence).toMatchObject({ rolling_by: 'ID', last_upgrade_age_days: 820, rule: 'rolling_stale' });
    expect(tw.evidence).not.toHaveProperty('package_manager');
  });

  it('knows the rolling branches of released distributions by their own marks', async () => {
    expect((await judge(corpus('kali_2025_4'))).evidence).toMatchObject({ reason: 'update_age_unknown', rolling_by: 'VERSION_CODENAME' });
    const sid = await judge('PRETTY_NAME="Debian GNU/Linux trixie/sid"\nNAME="Debian GNU/Linux"\nID=debian\n', {
      files: { '/etc/debian_version': 'trixie/sid\n' },
    });
    expect(sid.evidence).toMatchObject({ rolling_by: '/etc/debian_version', product: 'debian' });
  });
});

/** `cat /etc/os-release` on a StarFive VisionFive board (a RISC-V support matrix' test report, asciinema ui1P6rp5yjFTxO7YehuV7jC8s). */
const ALPINE_EDGE = `NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.20.0_alpha20231219
PRETTY_NAME="Alpine Linux edge"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
`;
/** `cat /etc/os-release` in a Fedora RISC-V boot log (a RISC-V support matrix' test report, 2024-07). */
const FEDORA_RAWHIDE = `NAME="Fedora Linux"
VERSION="41 (Rawhide Prerelease)"
ID=fedora
VERSION_ID=41
VERSION_CODENAME=""
PLATFORM_ID="platform:f41"
PRETTY_NAME="Fedora Linux 41 (Rawhide Prerelease)"
CPE_NAME="cpe:/o:fedoraproject:fedora:41"
`;
/** Void Linux's os-release as the hrmpf live system (Void-based) ships it, quoted in its documentation. */
const VOID = `NAME="Void"
ID="void"
PRETTY_NAME="Void Linux"
HOME_URL="https://voidlinux.org/"
DOCUMENTATION_URL="https://docs.voidlinux.org/"
LOGO="void-logo"
ANSI_COLOR="0;38;2;71;128;97"

DISTRIB_ID="void"
`;
/** LMDE 7's os-release as a public Dockerfile rebuilding it writes it (NAME="LMDE", ID=linuxmint, DEBIAN_CODENAME=trixie). */
const LMDE_7 = `PRETTY_NAME="LMDE 7 (gigi)"
NAME="LMDE"
VERSION_ID="7"
VERSION="7 (gigi)"
VERSION_CODENAME=gigi
ID=linuxmint
ID_LIKE=debian
DEBIAN_CODENAME=trixie
`;

describe('rolling releases: every package database, every mark', () => {
  it.each([
    ['portage', '/var/db/pkg'],
    ['xbps', '/var/db/xbps'],
    ['apk', '/lib/apk/db/installed'],
    ['rpm', '/var/lib/rpm'],
    ['rpm', '/usr/lib/sysimage/rpm'],
    ['nix', '/nix/var/nix/profiles'],
    ['dpkg', '/var/lib/dpkg/status'],
    ['pacman', '/var/lib/pacman/local'],
  ])('dates a rolling release by %s (%s)', async (manager, path) => {
    const verdict = await judge(corpus('gentoo_218'), { stats: { [path]: { mtime: '2026-11-11T12:00:00Z' } } });
    expect(verdict.evidence).toMatchObject({ package_manager: manager, last_upgrade_age_days: 10, rule: 'supported' });
  });

  it('takes the newest database whatever its place in the list', async () => {
    const older = { mtime: '2026-01-01T00:00:00Z' };
    const newer = { mtime: '2026-11-01T00:00:00Z' };
    expect(
      (await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': older, '/var/lib/dpkg/status': newer } })).evidence.package_manager,
    ).toBe('dpkg');
    expect(
      (await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': newer, '/var/lib/dpkg/status': older } })).evidence.package_manager,
    ).toBe('portage');
    // A database without a modification time dates nothing.
    expect((await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': {} } })).evidence.reason).toBe('update_age_unknown');
  });

  it('knows openSUSE Slowroll as rolling by its ID, dated by its snapshot (its ID_LIKE names no rolling base)', async () => {
    // CISOfy/lynis#1517 (2024-07-03): `cat /etc/os-release` on openSUSE Tumbleweed-Slowroll.
    const slowroll = `NAME="openSUSE Tumbleweed-Slowroll"
# VERSION="20240605"
ID="opensuse-slowroll"
ID_LIKE="opensuse suse"
VERSION_ID="20240605"
PRETTY_NAME="openSUSE Tumbleweed-Slowroll"
ANSI_COLOR="0;32"
# CPE 2.3 format, boo#1217921
CPE_NAME="cpe:2.3:o:opensuse:slowroll:20240605:*:*:*:*:*:*:*"
#CPE 2.2 format
#CPE_NAME="cpe:/o:opensuse:slowroll:20240605"
BUG_REPORT_URL="https://bugzilla.opensuse.org"
SUPPORT_URL="https://bugs.opensuse.org"
HOME_URL="https://www.opensuse.org"
DOCUMENTATION_URL="https://en.opensuse.org/openSUSE:Slowroll"
LOGO="distributor-logo-Slowroll"
`;
    expect(await judge(slowroll)).toMatchObject({
      status: 'FAIL',
      evidence: { product: 'opensuse-slowroll', rolling_by: 'ID', last_upgrade_age_days: 899, rule: 'rolling_stale' },
    });
  });

  it('knows Void Linux as rolling by its ID', async () => {
    const verdict = await judge(VOID, { stats: { '/var/db/xbps': { isDirectory: true, mtime: '2026-11-20T00:00:00Z' } } });
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { product: 'void', rolling_by: 'ID', package_manager: 'xbps' } });
  });

  it('knows Alpine edge by its VERSION_ID and Fedora Rawhide by its VERSION', async () => {
    const edge = await judge(ALPINE_EDGE, { stats: { '/lib/apk/db/installed': { mtime: '2026-11-20T00:00:00Z' } } });
    expect(edge).toMatchObject({ status: 'PASS', evidence: { product: 'alpine', rolling_by: 'VERSION_ID', package_manager: 'apk' } });
    const rawhide = await judge(FEDORA_RAWHIDE, { stats: { '/usr/lib/sysimage/rpm': { mtime: '2026-11-20T00:00:00Z' } } });
    expect(rawhide).toMatchObject({ status: 'PASS', evidence: { product: 'fedora', rolling_by: 'VERSION', package_manager: 'rpm' } });
    // Fedora 41 released is judged by its row, not as rolling.
    const released = await judge(FEDORA_RAWHIDE.replace(' (Rawhide Prerelease)', ' (Workstation Edition)'));
    expect(released.evidence).toMatchObject({ product: 'fedora', cycle: '41', rule: 'eol' });
  });
});

describe('products keyed by NAME', () => {
  it('files LMDE under its own product, not Linux Mint', async () => {
    expect(await judge(LMDE_7)).toMatchObject({
      status: 'PASS',
      evidence: { id: 'linuxmint', product: 'lmde', cycle: '7', base_product: 'debian', base_cycle: '13' },
    });
  });
});

/**
 * `cat /etc/os-release` on an OpenShift 4.13 worker (Red Hat Enterprise Linux CoreOS), quoted in the
 * linux-raid list thread "md array deadlock" (2023-11-21, Lakshmi Narasimhan Sundararajan).
 */
const RHCOS_4_13 = `NAME="Red Hat Enterprise Linux CoreOS"
ID="rhcos"
ID_LIKE="rhel fedora"
VERSION="413.92.202310210500-0"
VERSION_ID="4.13"
VARIANT="CoreOS"
VARIANT_ID=coreos
PLATFORM_ID="platform:el9"
PRETTY_NAME="Red Hat Enterprise Linux CoreOS 413.92.202310210500-0 (Plow)"
ANSI_COLOR="0;31"
CPE_NAME="cpe:/o:redhat:enterprise_linux:9::coreos"
HOME_URL="https://www.redhat.com/"
DOCUMENTATION_URL="https://docs.openshift.com/container-platform/4.13/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"
REDHAT_BUGZILLA_PRODUCT="OpenShift Container Platform"
REDHAT_BUGZILLA_PRODUCT_VERSION="4.13"
REDHAT_SUPPORT_PRODUCT="OpenShift Container Platform"
REDHAT_SUPPORT_PRODUCT_VERSION="4.13"
OPENSHIFT_VERSION="4.13"
RHEL_VERSION="9.2"
`;

/**
 * `cat /etc/os-release` on an OpenShift 4.3 worker, 2020-03-17 (pichuang/blog_site
 * source/_posts/20200317-openshift-with-coreos-part-1.md @ 21b1e77): RHCOS 4.1-4.5 carry neither
 * PLATFORM_ID nor CPE_NAME, only ID_LIKE and RHEL_VERSION (here unquoted).
 */
const RHCOS_4_3 = `NAME="Red Hat Enterprise Linux CoreOS"
VERSION="43.81.202003052336.0"
VERSION_ID="4.3"
OPENSHIFT_VERSION="4.3"
RHEL_VERSION=8.0
PRETTY_NAME="Red Hat Enterprise Linux CoreOS 43.81.202003052336.0 (Ootpa)"
ID="rhcos"
ID_LIKE="rhel fedora"
ANSI_COLOR="0;31"
HOME_URL="https://www.redhat.com/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"
REDHAT_BUGZILLA_PRODUCT="OpenShift Container Platform"
REDHAT_BUGZILLA_PRODUCT_VERSION="4.3"
REDHAT_SUPPORT_PRODUCT="OpenShift Container Platform"
REDHAT_SUPPORT_PRODUCT_VERSION="4.3"
OSTREE_VERSION='43.81.202003052336.0'
`;

/**
 * `cat /etc/*rele*` (its os-release part) in a CodeReady Containers 1.25.0 VM, OpenShift 4.7.5
 * (adavarski/OpenShift4-CRC-development README.md @ 0378eab): CPE_NAME, still no PLATFORM_ID.
 */
const RHCOS_4_7 = `NAME="Red Hat Enterprise Linux CoreOS"
VERSION="47.83.202103292105-0"
VERSION_ID="4.7"
OPENSHIFT_VERSION="4.7"
RHEL_VERSION="8.3"
PRETTY_NAME="Red Hat Enterprise Linux CoreOS 47.83.202103292105-0 (Ootpa)"
ID="rhcos"
ID_LIKE="rhel fedora"
ANSI_COLOR="0;31"
CPE_NAME="cpe:/o:redhat:enterprise_linux:8::coreos"
HOME_URL="https://www.redhat.com/"
BUG_REPORT_URL="https://bugzilla.redhat.com/"
REDHAT_BUGZILLA_PRODUCT="OpenShift Container Platform"
REDHAT_BUGZILLA_PRODUCT_VERSION="4.7"
REDHAT_SUPPORT_PRODUCT="OpenShift Container Platform"
REDHAT_SUPPORT_PRODUCT_VERSION="4.7"
OSTREE_VERSION='47.83.202103292105-0'
`;

describe('RHCOS, by the OpenShift release it is part of', () => {
  const rhcosEvidence = { source: 'os-release', id: 'rhcos', id_like: ['rhel', 'fedora'], lifecycle_checked_at: '2026-08-22' };

  it('judges each release by its OpenShift row (VERSION_ID is the OpenShift release), naming the RHEL below it', async () => {
    // endoflife.date red-hat-openshift: 4.13 maintenance ended 2024-11-17, 4.7 2022-08-24, 4.3 2020-10-27.
    expect(await judge(RHCOS_4_13)).toEqual({
      status: 'FAIL',
      evidence: {
        ...rhcosEvidence,
        product: 'rhcos',
        cycle: '4.13',
        version: '4.13',
        version_id: '4.13',
        base_product: 'rhel',
        base_cycle: '9',
        eol: '2024-11-17',
        extended_end: null,
        rule: 'eol',
      },
    });
    for (const [file, cycle, eol] of [
      [RHCOS_4_7, '4.7', '2022-08-24'],
      [RHCOS_4_3, '4.3', '2020-10-27'],
    ] as const) {
      expect(await judge(file)).toEqual({
        status: 'FAIL',
        evidence: {
          ...rhcosEvidence,
          product: 'rhcos',
          cycle,
          version: cycle,
          version_id: cycle,
          base_product: 'rhel',
          base_cycle: '8',
          eol,
          extended_end: null,
          rule: 'eol',
        },
      });
    }
  });

  it('without its OpenShift rows, takes the RHEL it names (PLATFORM_ID, RHEL_VERSION), never ID_LIKE with its own number', async () => {
    const { rhcos: _omitted, ...withoutOpenShift } = linuxLifecycle.products;
    const policy = resolvePolicy({ osVersion: { lifecycle: withoutOpenShift } });
    expect((await judge(RHCOS_4_13, {}, policy)).evidence).toMatchObject({ product: 'rhel', cycle: '9', derived_from: 'PLATFORM_ID' });
    expect((await judge(RHCOS_4_7, {}, policy)).evidence).toMatchObject({ product: 'rhel', cycle: '8', derived_from: 'CPE_NAME' });
    // RHCOS 4.3: neither PLATFORM_ID nor CPE_NAME; ID_LIKE's rebuild convention would read VERSION_ID 4.3 as RHEL 4.
    expect((await judge(RHCOS_4_3, {}, policy)).evidence).toMatchObject({
      product: 'rhel',
      cycle: '8',
      distribution: 'rhcos',
      derived_from: 'RHEL_VERSION',
      lifecycle_checked_at: 'policy',
    });
  });
});

describe('extended support, per product', () => {
  it('names RHEL ELS and SUSE LTSS with their settings, and PASSes on them once accepted', async () => {
    const rhel = resolvePolicy({ osVersion: { acceptExtendedSupport: { rhelEls: true } } });
    expect(await judge(corpus('redhat_7'), {}, rhel)).toMatchObject({
      status: 'PASS',
      evidence: {
        product: 'rhel',
        extended_end: '2029-05-31',
        extended_support: 'RHEL ELS',
        extended_support_setting: 'osVersion.acceptExtendedSupport.rhelEls',
        extended_support_accepted: true,
        rule: 'extended_support',
      },
    });
    const sles = resolvePolicy({ osVersion: { acceptExtendedSupport: { suseLtss: true } } });
    expect(await judge(corpus('sles_12'), {}, sles)).toMatchObject({
      status: 'PASS',
      evidence: {
        product: 'sles',
        cycle: '12.5',
        extended_end: '2027-10-31',
        extended_support: 'SUSE LTSS',
        extended_support_setting: 'osVersion.acceptExtendedSupport.suseLtss',
        extended_support_accepted: true,
        rule: 'extended_support',
      },
    });
  });
});

describe('a release older than every row of a policy table', () => {
  // An administrator's table (osVersion.lifecycle) that starts later than the built-in one.
  const newer = {
    alpine: linuxLifecycle.products.alpine!.filter((c) => /^3\.2\d$/.test(c.cycle)),
    fedora: linuxLifecycle.products.fedora!.filter((c) => Number(c.cycle) >= 40),
  };
  const policy = resolvePolicy({ osVersion: { lifecycle: newer } });

  it('shapes the cycle like the listed ones: major.minor where they are dotted, the major where not', async () => {
    expect(await judge(corpus('alpine_3_8'), {}, policy)).toMatchObject({
      status: 'FAIL',
      evidence: { product: 'alpine', cycle: '3.8', version: '3.8.5', rule: 'older_than_table', oldest_listed: '3.20' },
    });
    expect(await judge(corpus('fedora_28'), {}, policy)).toMatchObject({
      status: 'FAIL',
      evidence: { product: 'fedora', cycle: '28', version: '28', rule: 'older_than_table', oldest_listed: '40' },
    });
  });

  it('lacking the product a derivative names, leaves the release undecided instead of failing to read it', async () => {
    // elementary OS 7 names Ubuntu jammy (UBUNTU_CODENAME), a product this table does not have.
    expect(await judge(corpus('elementary_7'), {}, policy)).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'unknown_release', product: 'elementary', lifecycle_checked_at: 'policy' },
    });
  });
});

it('is the Linux OS_VERSION check', () => {
  expect(osVersion).toMatchObject({ key: 'OS_VERSION', platform: 'LINUX' });
});

describe('what the rolling judgement reads', () => {
  const at = (mtime: string) => ({ mtime });

  it('passes a last upgrade exactly rollingMaxAgeDays old, and fails one a day older', async () => {
    expect(await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': at('2026-08-23T12:00:00Z') } })).toMatchObject({
      status: 'PASS',
      evidence: { last_upgrade_age_days: 90, rolling_max_age_days: 90, rule: 'supported' },
    });
    expect(await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': at('2026-08-22T12:00:00Z') } })).toMatchObject({
      status: 'FAIL',
      evidence: { last_upgrade_age_days: 91, rule: 'rolling_stale' },
    });
  });

  it('skips a database without a time for a dated one after it, and keeps the first of two equally new', async () => {
    const dated = await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': {}, '/var/lib/dpkg/status': at('2026-11-11T12:00:00Z') } });
    expect(dated.evidence).toMatchObject({ package_manager: 'dpkg', rule: 'supported' });
    const tie = at('2026-11-11T12:00:00Z');
    expect(
      (await judge(corpus('gentoo_218'), { stats: { '/var/db/pkg': tie, '/var/lib/dpkg/status': tie } })).evidence.package_manager,
    ).toBe('portage');
  });

  it('reads package databases only for a rolling release, and records none it did not find', async () => {
    const policy = resolvePolicy({});
    const collect = (text: string, more: HostRecording) =>
      osVersion.collect(createContext(new FakeHost({ ...more, files: { '/etc/os-release': text } }), policy, NOW));
    const pkg = { stats: { '/var/lib/dpkg/status': at('2026-11-11T12:00:00Z') } };
    expect(await collect(corpus('debian_12'), pkg)).not.toHaveProperty('packages');
    expect(await collect(corpus('gentoo_218'), {})).not.toHaveProperty('packages');
    expect(await collect(corpus('gentoo_218'), pkg)).toHaveProperty('packages', {
      manager: 'dpkg',
      path: '/var/lib/dpkg/status',
      changedMs: Date.parse('2026-11-11T12:00:00Z'),
    });
  });

  it('names no VERSION_ID that the file does not carry (Manjaro has none)', async () => {
    expect((await judge(corpus('manjaro'))).evidence).not.toHaveProperty('version_id');
  });
});

describe('releases it cannot decide, in their own words', () => {
  it.each([
    // A VERSION_ID that is no release number: nothing to look up.
    ['ios_xr_6', 'unrecognized_version'],
    ['nexus_7', 'unrecognized_version'],
    ['rancheros_1_4', 'unrecognized_version'],
    ['ubios', 'unrecognized_version'],
    ['xenserver_7_6', 'unrecognized_version'],
    // A release number of a product the table does not know.
    ['buildroot', 'unknown_release'],
    ['coreos', 'unknown_release'],
    ['wrlinux', 'unknown_release'],
    ['cumulus_5_12', 'unknown_release'],
  ])('%s: %s', async (file, reason) => {
    expect(await judge(corpus(file))).toMatchObject({ status: 'UNKNOWN', evidence: { reason } });
  });
});
