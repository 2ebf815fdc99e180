// unattended-upgrades' allowed origins against the archives a machine fetches, by its own matching
// rules, on recordings: this machine's APT lists (Debian 12), apt-config dumps of the packaged
// Debian and Ubuntu 50unattended-upgrades (test/fixtures/apt/README.md), and origins printed by
// unattended-upgrades on real machines (issue threads named at each test).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../checks/engine';
import {
  allowedOrigins,
  archiveNames,
  collectArchives,
  fnmatch,
  isSecurityArchive,
  judgeOrigins,
  lsbIdentity,
  OriginPatternError,
  parseReleaseHeader,
  patternMatches,
  patternsForEvidence,
  releaseFiles,
  substitute,
  withoutSites,
  type AptArchive,
} from '../../../checks/linux/aptOrigins';
import { parseOsRelease } from '../../../checks/linux/osRelease';
import { resolvePolicy } from '../../../checks/policy';
import { FakeHost } from '../../support/fakeHost';

const apt = (file: string) => readFileSync(new URL(`../../fixtures/apt/${file}`, import.meta.url), 'utf8');
const osRelease = (name: string) =>
  parseOsRelease(readFileSync(new URL(`../../fixtures/os-release/chef-os_release/${name}`, import.meta.url), 'utf8'));
const LISTING = apt('debian-12-lists/listing.txt').split('\n').filter(Boolean);
const HEADS = Object.fromEntries(
  LISTING.filter((f) => f.endsWith('InRelease')).map((f) => [`/var/lib/apt/lists/${f}`, apt(`debian-12-lists/${f}`)]),
);
const DEBIAN_DUMP = apt('debian-unattended-upgrades-2.9.1+nmu3-default.apt-config-dump');
const UBUNTU_DUMP = apt('ubuntu-unattended-upgrades-default.apt-config-dump');
const DEBIAN = lsbIdentity(osRelease('debian_12'));

const collect = async (recording: ConstructorParameters<typeof FakeHost>[0]) => {
  const host = new FakeHost(recording);
  return { host, lists: await collectArchives(createContext(host, resolvePolicy({}), new Date('2026-11-28T00:00:00Z'))) };
};

async function debianArchives(): Promise<AptArchive[]> {
  const { lists } = await collect({ dirs: { '/var/lib/apt/lists': LISTING }, files: HEADS });
  if (!lists.ok) throw new Error('recorded lists unreadable');
  return lists.archives;
}

describe("the distribution identity unattended-upgrades substitutes (lsb_release's)", () => {
  it("is lsb_release's on Debian 12, as this machine's `lsb_release -i -s`, `-c -s`, `-r -s` print it (Debian, bookworm, 12)", () => {
    expect(DEBIAN).toEqual({ distro_id: 'Debian', distro_codename: 'bookworm', distro_release: '12' });
  });

  it('takes NAME where it is ID in other case, else ID capitalised; n/a where os-release has nothing', () => {
    expect(lsbIdentity(osRelease('ubuntu_2404'))).toEqual({ distro_id: 'Ubuntu', distro_codename: 'noble', distro_release: '24.04' });
    expect(lsbIdentity(osRelease('raspbian_10'))).toMatchObject({ distro_id: 'Raspbian', distro_codename: 'buster' });
    expect(lsbIdentity(osRelease('linuxmint_22'))).toMatchObject({ distro_id: 'Linuxmint', distro_codename: 'wilma' });
    // lsb_release 12 prints NAME where it is ID in other case (AlmaLinux's os-release: ID=almalinux, NAME="AlmaLinux").
    expect(lsbIdentity(parseOsRelease('ID=almalinux\nNAME="AlmaLinux"\n'))).toMatchObject({ distro_id: 'AlmaLinux' });
    expect(lsbIdentity(undefined)).toEqual({ distro_id: 'n/a', distro_codename: 'n/a', distro_release: 'n/a' });
    expect(lsbIdentity(parseOsRelease('ID=example\n'))).toEqual({ distro_id: 'Example', distro_codename: 'n/a', distro_release: 'n/a' });
  });
});

describe('substitution, as Python string.Template.substitute', () => {
  it('replaces ${name} and $name, keeps $$ as $, refuses unknown names and a lone $', () => {
    expect(substitute('origin=Debian,codename=${distro_codename}-security', DEBIAN)).toBe('origin=Debian,codename=bookworm-security');
    expect(substitute('$distro_id:$distro_codename $distro_release', DEBIAN)).toBe('Debian:bookworm 12');
    expect(substitute('a$$b', DEBIAN)).toBe('a$b');
    expect(() => substitute('${distro_name}', DEBIAN)).toThrow(OriginPatternError);
    expect(() => substitute('${DISTRO_ID}', DEBIAN)).toThrow(OriginPatternError);
    expect(() => substitute('${toString}', DEBIAN)).toThrow(OriginPatternError);
    expect(() => substitute('price $ 5', DEBIAN)).toThrow(new OriginPatternError('invalid placeholder in price $ 5'));
    expect(() => substitute('${distro_id', DEBIAN)).toThrow(OriginPatternError);
  });
});

describe('the allowed origins apt-config dumps', () => {
  it("reads Debian's packaged Origins-Pattern, substituted", () => {
    expect(allowedOrigins(DEBIAN_DUMP, DEBIAN)).toEqual([
      'origin=Debian,codename=bookworm,label=Debian',
      'origin=Debian,codename=bookworm,label=Debian-Security',
      'origin=Debian,codename=bookworm-security,label=Debian-Security',
    ]);
  });

  it("turns Ubuntu's packaged Allowed-Origins (origin:archive) into o=…,a=…", () => {
    expect(allowedOrigins(UBUNTU_DUMP, lsbIdentity(osRelease('ubuntu_2404')))).toEqual([
      'o=Ubuntu,a=noble',
      'o=Ubuntu,a=noble-security',
      'o=UbuntuESMApps,a=noble-apps-security',
      'o=UbuntuESMApps,a=noble-apps-legacy-security',
      'o=UbuntuESM,a=noble-infra-security',
      'o=UbuntuESM,a=noble-infra-legacy-security',
    ]);
  });

  it('reads the legacy list first, a space as separator without a colon, `\\:` as a colon and escapes commas', () => {
    const dump = [
      'Unattended-Upgrade::Origins-Pattern:: "site=example.org";',
      'Unattended-Upgrade::Allowed-Origins:: "Debian stable";',
      'Unattended-Upgrade::Allowed-Origins:: "Example\\:Org:stable";',
      'Unattended-Upgrade::Allowed-Origins:: "Google, Inc.:contrib";',
      'Unattended-Upgrade::Package-Blacklist:: "linux-";',
    ].join('\n');
    expect(allowedOrigins(dump, DEBIAN)).toEqual([
      'o=Debian,a=stable',
      'o=Example:Org,a=stable',
      'o=Google\\, Inc.,a=contrib',
      'site=example.org',
    ]);
    expect(() => allowedOrigins('Unattended-Upgrade::Allowed-Origins:: "a:b:c";', DEBIAN)).toThrow(
      new OriginPatternError('cannot split a:b:c into origin and archive'),
    );
    // Python's str.split(): runs of blanks, and none at either end.
    expect(allowedOrigins('Unattended-Upgrade::Allowed-Origins:: "  Debian   stable ";', DEBIAN)).toEqual(['o=Debian,a=stable']);
    // A line apt-config did not finish is not a value.
    expect(allowedOrigins('Unattended-Upgrade::Origins-Pattern:: "o=Debian', DEBIAN)).toEqual([]);
    expect(() => allowedOrigins('Unattended-Upgrade::Allowed-Origins:: "Debian";', DEBIAN)).toThrow(OriginPatternError);
    expect(allowedOrigins('APT::Periodic::Unattended-Upgrade "1";', DEBIAN)).toEqual([]);
  });
});

describe("the archives this machine's lists name", () => {
  it('reads each Release header and the components fetched beside it (this machine, Debian 12)', async () => {
    expect(await debianArchives()).toEqual([
      {
        file: 'deb.debian.org_debian-security_dists_bookworm-security_InRelease',
        origin: 'Debian',
        label: 'Debian-Security',
        suite: 'oldstable-security',
        codename: 'bookworm-security',
        site: 'deb.debian.org',
        components: ['main'],
      },
      {
        file: 'deb.debian.org_debian_dists_bookworm-updates_InRelease',
        origin: 'Debian',
        label: 'Debian',
        suite: 'oldstable-updates',
        codename: 'bookworm-updates',
        site: 'deb.debian.org',
        components: ['main'],
      },
      {
        file: 'deb.debian.org_debian_dists_bookworm_InRelease',
        origin: 'Debian',
        label: 'Debian',
        suite: 'oldstable',
        codename: 'bookworm',
        site: 'deb.debian.org',
        components: ['main'],
      },
    ]);
  });

  it("takes InRelease before Release, a flat repository's lists, `%5f` and `_` in components as apt writes them", () => {
    expect(
      releaseFiles([
        'a.example_debian_dists_x_InRelease',
        'a.example_debian_dists_x_Release',
        'a.example_debian_dists_x_Release.gpg',
        'a.example_debian_dists_x_updates_main_binary-amd64_Packages',
        'a.example_debian_dists_x_contrib_binary-i386_Packages.lz4',
        'a.example_debian_dists_x_non%5ffree_binary-amd64_Packages',
        'a.example_debian_dists_x_main_i18n_Translation-en',
        'b.example:8080_my%5frepo_Release',
        'b.example:8080_my%5frepo_Packages.gz',
        'c%5fhost_flat_Release',
        'c%5fhost_flat_Packages',
        'c%5fhost_flat_x_Packages',
        'd.example_debian_dists_y_Release.gpg',
        'e_flat_Release',
        'e_flat_x_Packages',
        'lock',
        // Unsorted: an InRelease still wins over a Release listed before it.
        'f_dists_z_Release',
        'f_dists_z_InRelease',
      ]),
    ).toEqual([
      { file: 'a.example_debian_dists_x_InRelease', site: 'a.example', components: ['updates/main', 'contrib', 'non_free'] },
      { file: 'b.example:8080_my%5frepo_Release', site: 'b.example:8080', components: [''] },
      { file: 'c%5fhost_flat_Release', site: 'c_host', components: [''] },
      { file: 'e_flat_Release', site: 'e', components: [] },
      { file: 'f_dists_z_InRelease', site: 'f', components: [] },
    ]);
  });

  it('stops at the checksum lists, skips PGP armour and continuation lines, and drops a line a bounded read cut', () => {
    const head = apt('debian-12-lists/deb.debian.org_debian_dists_bookworm_InRelease');
    expect(parseReleaseHeader(head, false)).toMatchObject({ origin: 'Debian', label: 'Debian', suite: 'oldstable', codename: 'bookworm' });
    expect(parseReleaseHeader('Origin: A\nSHA256:\n abc 1 main/x\nLabel: late\n', false)).toEqual({ origin: 'A' });
    expect(parseReleaseHeader('Origin: A\nDescription: x\n more\nSuite: s\n', false)).toEqual({
      origin: 'A',
      description: 'x',
      suite: 's',
    });
    expect(parseReleaseHeader('Origin: A\nLabel: B\nCodename: book', true)).toEqual({ origin: 'A', label: 'B' });
    // A line of blanks ends a deb822 paragraph; a continuation line is no field, whatever it holds.
    expect(parseReleaseHeader('Origin: A\n  \t\nLabel: B\n', false)).toEqual({ origin: 'A' });
    expect(parseReleaseHeader('Origin: A\nDescription: x\n Note: y\n', false)).toEqual({ origin: 'A', description: 'x' });
    // Only the checksum lists (an empty value) end the header; other empty or look-alike fields do not.
    expect(parseReleaseHeader('Acquire-By-Hash:\nX-SHA256:\nSHA1-Extra:\nSuite: s\n', false)).toEqual({
      'acquire-by-hash': '',
      'x-sha256': '',
      'sha1-extra': '',
      suite: 's',
    });
    expect(parseReleaseHeader('Origin: A\nSHA256: deadbeef\nSuite: s\n', false)).toEqual({ origin: 'A', sha256: 'deadbeef', suite: 's' });
    expect(parseReleaseHeader('Origin: A\nCodename: book', false)).toEqual({ origin: 'A', codename: 'book' });
    expect(parseReleaseHeader('Origin: A\n\nLabel: B\n', false)).toEqual({ origin: 'A' });
    expect(parseReleaseHeader('Hash: SHA512\n\nOrigin: A\n', false)).toEqual({ hash: 'SHA512' });
    expect(
      parseReleaseHeader('-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nOrigin: A\n-----BEGIN PGP SIGNATURE-----\n', false),
    ).toEqual({
      origin: 'A',
    });
  });

  it('reads only the head of each Release file', async () => {
    const pad = Array.from({ length: 200 }, (_, i) => `X-Pad-${i}: ${'x'.repeat(20)}`).join('\n');
    const { lists } = await collect({
      dirs: { '/var/lib/apt/lists': ['h_dists_s_InRelease', 'h_dists_s_main_binary-amd64_Packages'] },
      files: { '/var/lib/apt/lists/h_dists_s_InRelease': `Label: L\n${pad}\nOrigin: beyond-the-head\nSuite: s\n` },
    });
    expect(lists).toEqual({
      ok: true,
      archives: [{ file: 'h_dists_s_InRelease', origin: '', label: 'L', suite: '', codename: '', site: 'h', components: ['main'] }],
    });
  });

  it('drops the line its bound cut, and no more', async () => {
    const pad = `X-Pad: ${'x'.repeat(4096 - 'X-Pad: \nSuite: sta'.length)}\n`;
    const { lists } = await collect({
      dirs: { '/var/lib/apt/lists': ['h_dists_s_InRelease'] },
      files: { '/var/lib/apt/lists/h_dists_s_InRelease': `${pad}Suite: stable\nOrigin: O\n` },
    });
    expect(lists).toMatchObject({ ok: true, archives: [{ suite: '' }] });
    const whole = await collect({
      dirs: { '/var/lib/apt/lists': ['h_dists_s_InRelease'] },
      files: { '/var/lib/apt/lists/h_dists_s_InRelease': `${pad.slice(10)}Suite: stable\n` },
    });
    expect(whole.lists).toMatchObject({ ok: true, archives: [{ suite: 'stable' }] });
  });

  it("takes a Release file's Components where no list is fetched, and Archive where it has no Suite", async () => {
    const { lists } = await collect({
      dirs: { '/var/lib/apt/lists': ['h_dists_s_Release', 'i_dists_t_Release'] },
      files: {
        '/var/lib/apt/lists/h_dists_s_Release': 'Origin: O\nArchive: old\nComponents: main contrib\n',
        '/var/lib/apt/lists/i_dists_t_Release': 'Origin: P\nSuite: s',
      },
    });
    expect(lists).toMatchObject({
      ok: true,
      archives: [
        { origin: 'O', label: '', suite: 'old', codename: '', components: ['main', 'contrib'] },
        // A last line without its newline, in a file shorter than the bound, is whole.
        { origin: 'P', label: '', suite: 's', components: [] },
      ],
    });
  });

  it('reads 64 Release files at most', async () => {
    const names = Array.from({ length: 70 }, (_, i) => `h${String(i).padStart(2, '0')}_dists_s_Release`);
    const { lists, host } = await collect({
      dirs: { '/var/lib/apt/lists': names },
      files: Object.fromEntries(names.map((n) => [`/var/lib/apt/lists/${n}`, 'Origin: O\n'])),
    });
    expect(lists.ok && lists.archives).toHaveLength(64);
    expect(host.calls.filter((c) => c.kind === 'readFile')).toHaveLength(64);
  });

  it('says why when the lists cannot be read, or there are none, and which Release file it could not read', async () => {
    expect((await collect({})).lists).toEqual({ ok: false, reason: 'lists_unreadable', error: 'not_found' });
    expect((await collect({ dirs: { '/var/lib/apt/lists': { error: 'permission_denied' } } })).lists).toEqual({
      ok: false,
      reason: 'lists_unreadable',
      error: 'permission_denied',
    });
    // Never ran `apt update` (container images clean the lists): the directory holds only its lock.
    expect((await collect({ dirs: { '/var/lib/apt/lists': ['auxfiles', 'lock', 'partial'] } })).lists).toEqual({
      ok: false,
      reason: 'no_release_files',
    });
    const dirs = { '/var/lib/apt/lists': LISTING };
    const one = Object.keys(HEADS)[0]!;
    expect((await collect({ dirs, files: { ...HEADS, [one]: { error: 'permission_denied' } } })).lists).toMatchObject({
      ok: true,
      unread: [one.slice('/var/lib/apt/lists/'.length)],
    });
    expect((await collect({ dirs })).lists).toEqual({ ok: false, reason: 'lists_unreadable', error: 'release_files_unreadable' });
  });
});

describe("matching, by unattended-upgrades' rules", () => {
  it('is fnmatch: whole string, case-sensitive, *, ? and [sets]', () => {
    expect(fnmatch('bookworm-security', 'bookworm*')).toBe(true);
    expect(fnmatch('bookworm', 'book')).toBe(false);
    expect(fnmatch('Debian', 'debian')).toBe(false);
    expect(fnmatch('Debian', 'Deb?an')).toBe(true);
    expect(fnmatch('Debian', 'Deb??an')).toBe(false);
    expect(fnmatch('Debian', 'D[aeiou]bian')).toBe(true);
    expect(fnmatch('Debian', 'D[!e]bian')).toBe(false);
    expect(fnmatch('D^bian', 'D[^]bian')).toBe(true);
    expect(fnmatch('D]bian', 'D[]]bian')).toBe(true);
    expect(fnmatch('D[bian', 'D[bian')).toBe(true);
    expect(fnmatch('Dabian', 'D[!e]bian')).toBe(true);
    expect(fnmatch('D!bian', 'D[!e]bian')).toBe(true);
    expect(fnmatch('a', '[!]]')).toBe(true);
    expect(fnmatch(']', '[!]]')).toBe(false);
    expect(fnmatch('Dxbian', 'D[^]bian')).toBe(false);
    expect(fnmatch('^', '[^a]')).toBe(true);
    expect(fnmatch('b', '[^a]')).toBe(false);
    expect(fnmatch('a.b', 'a.b')).toBe(true);
    expect(fnmatch('axb', 'a.b')).toBe(false);
    expect(fnmatch('a(b)|c+', 'a(b)|c+')).toBe(true);
    expect(fnmatch('a\\b', 'a[\\]b')).toBe(true);
    expect(fnmatch('x\ny', 'x*y')).toBe(true);
    expect(fnmatch('', '*')).toBe(true);
  });

  it("matches every key on this machine's archives: o/origin, l/label, a/suite/archive, n/codename, c/component, site", async () => {
    const [security, updates, release] = (await debianArchives()) as [AptArchive, AptArchive, AptArchive];
    const admits = (pattern: string, a: AptArchive) => patternMatches(pattern, a, DEBIAN);
    expect(admits('o=Debian,n=${distro_codename}', release)).toBe(true);
    expect(admits('origin=Debian,codename=bookworm,label=Debian', updates)).toBe(false);
    expect(admits('l=Debian-Security', security)).toBe(true);
    expect(admits('label=Debian-Security', release)).toBe(false);
    expect(admits('a=oldstable-updates', updates)).toBe(true);
    expect(admits('suite=oldstable', release)).toBe(true);
    expect(admits('archive=oldstable', updates)).toBe(false);
    expect(admits('archive=oldstable', release)).toBe(true);
    expect(admits('component=main', release)).toBe(true);
    expect(admits('c=main', security)).toBe(true);
    expect(admits('component=updates/main', security)).toBe(false);
    expect(admits('site=deb.debian.org', release)).toBe(true);
    expect(admits('site=*.debian.org,o=Debian', release)).toBe(true);
    expect(admits('site=security.debian.org', security)).toBe(false);
    expect(admits(' origin = Debian , codename = bookworm* ', updates)).toBe(true);
    expect(admits('', release)).toBe(false);
    expect(admits('   ', release)).toBe(false);
  });

  it('matches each component as its own origin, `\\,` a literal comma', () => {
    const twoComponents = archive({ origin: 'Google, Inc.', suite: 'contrib', components: ['main', 'extra'] });
    expect(patternMatches('origin=Google\\, Inc.,suite=contrib', twoComponents, DEBIAN)).toBe(true);
    expect(patternMatches('origin=Google\\, Inc.,c=extra', twoComponents, DEBIAN)).toBe(true);
    expect(patternMatches('origin=Google\\, Inc.,c=other', twoComponents, DEBIAN)).toBe(false);
    expect(patternMatches('c=', archive({}), DEBIAN)).toBe(true);
  });

  it('stops where unattended-upgrades stops: an unknown key, a token without one `=`, a bad placeholder', () => {
    expect(() => patternMatches('o=a=b', archive({}), DEBIAN)).toThrow(new OriginPatternError('token o=a=b of o=a=b is not key=value'));
    for (const bad of ['o=Debian,foo=bar', 'o=Debian,', 'o', 'o=a=b', 'o=${distro_name}', 'toString=x']) {
      expect(() => patternMatches(bad, archive({ origin: 'Debian' }), DEBIAN), bad).toThrow(OriginPatternError);
    }
  });

  // nextcloud/nextcloudpi#1233 (svenb1234, a Raspberry Pi on Raspbian buster, `unattended-upgrades -d`):
  // "Allowed origins are: o=Debian,n=buster, o=deb.sury.org,n=buster, o=Raspberry Pi Foundation,n=buster,
  // origin=Debian,codename=buster,label=Debian, origin=Debian,codename=buster,label=Debian-Security", and
  // its packages' origin "component:'main' archive:'stable' origin:'Raspbian' label:'Raspbian'
  // site:'raspbian.raspberrypi.org'" (no codename printed). The same five in #1306 (2021-08-17),
  // "the origin has changed back to `Raspbian` once again, and unattended-upgrades skips updates".
  it("admits none of a Raspbian machine's recorded patterns for its Raspbian archive (nextcloudpi#1233)", () => {
    const raspbian = archive({
      origin: 'Raspbian',
      label: 'Raspbian',
      suite: 'stable',
      site: 'raspbian.raspberrypi.org',
      components: ['main'],
    });
    const patterns = [
      'o=Debian,n=buster',
      'o=deb.sury.org,n=buster',
      'o=Raspberry Pi Foundation,n=buster',
      'origin=Debian,codename=buster,label=Debian',
      'origin=Debian,codename=buster,label=Debian-Security',
    ];
    const distro = lsbIdentity(osRelease('raspbian_10'));
    for (const p of patterns) expect(patternMatches(p, raspbian, distro), p).toBe(false);
    expect(judgeOrigins(patterns, [raspbian], distro)).toMatchObject({ ok: false, word: 'allowed_origins_not_fetched' });
  });
});

// geerlingguy/ansible-role-security#57 (mkatajah, 2020-05-13), a Debian 10 server: the role's
// `Unattended-Upgrade::Allowed-Origins { "${distro_id} ${distro_codename}-security"; }` logged
// "Allowed origins are: o=Debian,a=buster-security" then "No packages found that can be upgraded
// unattended", while `apt-get upgrade -s` offered "openssl … (1.1.1d-0+deb10u3 Debian:10.4/stable,
// Debian-Security:10/stable [amd64])" (apt's Label:Version/Suite): the intent looked fine, nothing was
// installed. Origin and Codename are not printed there, so they stay empty here.
describe('a real machine whose allowed origin matched nothing it fetched (ansible-role-security#57)', () => {
  const dump = 'Unattended-Upgrade::Allowed-Origins:: "${distro_id} ${distro_codename}-security";';
  const distro = lsbIdentity(osRelease('debian_10'));
  const fetched = [archive({ label: 'Debian', suite: 'stable' }), archive({ label: 'Debian-Security', suite: 'stable' })];

  it('reads its pattern as unattended-upgrades logged it, and finds that nothing fetched is allowed', () => {
    const patterns = allowedOrigins(dump, distro);
    expect(patterns).toEqual(['o=Debian,a=buster-security']);
    expect(judgeOrigins(patterns, fetched, distro)).toMatchObject({ ok: false, word: 'allowed_origins_not_fetched', notAllowed: fetched });
    expect(isSecurityArchive(fetched[1]!)).toBe(true);
  });
});

describe('the judgement', () => {
  const DEBIAN_PATTERNS = allowedOrigins(DEBIAN_DUMP, DEBIAN);

  it("passes Debian's packaged patterns on this machine's archives: the release and its security archive, not -updates", async () => {
    const archives = await debianArchives();
    const judged = judgeOrigins(DEBIAN_PATTERNS, archives, DEBIAN);
    expect(judged.ok).toBe(true);
    expect(judged.ok && archiveNames(judged.allowed)).toEqual(['Debian/oldstable-security', 'Debian/oldstable']);
  });

  it('fails when nothing fetched is allowed: no patterns, or the Ubuntu-style "origin:codename" form on Debian (a= is the Suite, oldstable)', async () => {
    const archives = await debianArchives();
    expect(judgeOrigins([], archives, DEBIAN)).toMatchObject({ ok: false, word: 'allowed_origins_not_fetched', notAllowed: archives });
    const legacy = allowedOrigins(UBUNTU_DUMP, DEBIAN);
    expect(legacy.slice(0, 2)).toEqual(['o=Debian,a=bookworm', 'o=Debian,a=bookworm-security']);
    expect(judgeOrigins(legacy, archives, DEBIAN)).toMatchObject({ ok: false, word: 'allowed_origins_not_fetched' });
  });

  it('fails when a security archive is fetched but not allowed, naming it', async () => {
    const archives = await debianArchives();
    const judged = judgeOrigins([DEBIAN_PATTERNS[0]!], archives, DEBIAN);
    expect(judged).toMatchObject({ ok: false, word: 'security_archive_not_allowed' });
    expect(!judged.ok && 'notAllowed' in judged && archiveNames(judged.notAllowed)).toEqual(['Debian/oldstable-security']);
    // By label alone, or by codename alone.
    expect(judgeOrigins(['o=X'], [archive({ origin: 'X' }), archive({ label: 'Example-Security' })], DEBIAN)).toMatchObject({
      word: 'security_archive_not_allowed',
    });
    expect(judgeOrigins(['o=X'], [archive({ origin: 'X' }), archive({ codename: 'x-security' })], DEBIAN)).toMatchObject({
      word: 'security_archive_not_allowed',
    });
    expect(isSecurityArchive(archive({ label: 'Debian-Security-Tools', suite: 'x-security-staging' }))).toBe(false);
    // Security updates allowed alone are what AUTO_UPDATE asks for.
    expect(judgeOrigins([DEBIAN_PATTERNS[2]!], archives, DEBIAN)).toMatchObject({ ok: true });
  });

  // The distribution's own archives fetched and none allowed while a third party's is: a test input
  // joining this machine's Debian archives (its security archive left out) with the Docker origin
  // unattended-upgrades printed on a real Debian machine (mvo5/unattended-upgrades#322:
  // "a=bullseye,c=stable,v=,o=Docker,l=Docker CE … site='download.docker.com'").
  it("fails when the distribution's own archives are fetched and none is allowed", async () => {
    const debian = (await debianArchives()).filter((a) => !a.suite.endsWith('-security'));
    const docker = archive({
      origin: 'Docker',
      label: 'Docker CE',
      suite: 'bullseye',
      site: 'download.docker.com',
      components: ['stable'],
    });
    const judged = judgeOrigins(['o=Docker,a=bullseye'], [...debian, docker], DEBIAN);
    expect(judged).toMatchObject({ ok: false, word: 'distribution_archive_not_allowed' });
    expect(!judged.ok && 'notAllowed' in judged && archiveNames(judged.notAllowed)).toEqual([
      'Debian/oldstable-updates',
      'Debian/oldstable',
    ]);
    // Its origin in other case is still the distribution's.
    expect(judgeOrigins(['o=Docker,a=bullseye'], [...debian, docker], { ...DEBIAN, distro_id: 'DEBIAN' })).toMatchObject({
      word: 'distribution_archive_not_allowed',
    });
    expect(judgeOrigins(['o=Docker,a=bullseye', 'o=Debian,a=oldstable-updates'], [...debian, docker], DEBIAN)).toMatchObject({ ok: true });
    // A distribution none of whose archives is fetched is not judged by this rule.
    expect(judgeOrigins(['o=Docker,a=bullseye'], [docker], DEBIAN)).toMatchObject({ ok: true });
  });

  it('says which pattern unattended-upgrades would stop at', async () => {
    expect(judgeOrigins(['o=Debian,foo=bar'], await debianArchives(), DEBIAN)).toEqual({
      ok: false,
      word: 'origin_pattern_unreadable',
      error: 'unknown key foo in o=Debian,foo=bar',
    });
  });

  it('names at most ten archives, each once', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ ...DEBIAN_ARCHIVE, suite: `s${i}` }));
    expect(archiveNames([...many, many[0]!])).toHaveLength(10);
    expect(archiveNames([DEBIAN_ARCHIVE, DEBIAN_ARCHIVE, { ...DEBIAN_ARCHIVE, origin: '', suite: '', codename: 'c' }])).toEqual([
      'Debian/oldstable',
      '?/c',
    ]);
    expect(archiveNames([{ ...DEBIAN_ARCHIVE, origin: '', suite: '', codename: '' }])).toEqual(['?/?']);
  });

  it('never shows a site (a mirror host, often internal) in evidence: patterns and pattern errors alike', () => {
    expect(withoutSites('o=Debian,site=mirror.corp.example,a=stable')).toBe('o=Debian,site=…,a=stable');
    expect(withoutSites('site=a\\,b.example,o=X')).toBe('site=…,o=X');
    expect(withoutSites('token site=10.0.0.5 of o=Debian is not key=value')).toBe('token site=… of o=Debian is not key=value');
    expect(withoutSites('o=Debian,l=Debian-Security,label=website=x')).toBe('o=Debian,l=Debian-Security,label=website=x');
    const patterns = Array.from({ length: 12 }, (_, i) => `o=Debian,site=host${i}.example,a=${'x'.repeat(200)}`);
    const shown = patternsForEvidence(patterns);
    expect(shown).toHaveLength(10);
    expect(shown[0]).toBe(`o=Debian,site=…,a=${'x'.repeat(120 - 'o=Debian,site=…,a='.length)}`);
    expect(shown.join()).not.toContain('host');
  });
});

const DEBIAN_ARCHIVE: AptArchive = {
  file: 'f',
  origin: 'Debian',
  label: 'Debian',
  suite: 'oldstable',
  codename: 'bookworm',
  site: 'deb.debian.org',
  components: ['main'],
};

function archive(fields: Partial<AptArchive>): AptArchive {
  return { file: 'f', origin: '', label: '', suite: '', codename: '', site: '', components: [], ...fields };
}
