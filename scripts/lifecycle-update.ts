// Regenerates the lifecycle tables (checks/<os>/lifecycle.ts) from a checkout of the endoflife.date
// data set (github.com/endoflife-date/endoflife.date, MIT): every product that is an operating
// system release line on Linux, macOS, Windows or FreeBSD, one table per platform so that a
// platform's agent loads only its own. Each table keeps the data set's commit and each product's
// source file. Fails, writing nothing, on an OS product it does not know, a cycle it cannot map or
// a field it cannot read: a new product needs a decision here, never a silent omission.
//   npm run lifecycle:update -- <path to a checkout of endoflife-date/endoflife.date>
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import type { LifecycleCycle, LifecycleData } from '../checks/lifecycleTable';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORMS = { LINUX: 'linux', DARWIN: 'darwin', WINDOWS: 'windows', FREEBSD: 'freebsd' } as const;
type Platform = keyof typeof PLATFORMS;

/** One release as a product file lists it (the fields this script reads). */
interface SourceRelease {
  releaseCycle: string;
  codename?: string;
  releaseDate?: string;
  eol?: string | boolean;
  eoes?: string | boolean;
  latest?: string;
  latestReleaseDate?: string;
}

/** Where a product's cycles go: which table rows (product key, cycle) each one becomes. */
interface Target {
  platform: Platform;
  /** Table rows for one cycle of the source; none: the script fails (unmapped cycle). */
  rows: (cycle: string) => { product: string; cycle: string }[];
  /** Leave `latest` out (Windows lists the build, not the patch level OS_VERSION compares). */
  withoutLatest?: boolean;
}

const same =
  (platform: Platform, product: string): Target['rows'] =>
  (cycle) => [{ product, cycle }];
const linux = (product: string): Target => ({ platform: 'LINUX', rows: same('LINUX', product) });

/** Linux Mint lists its Debian edition beside the Ubuntu-based one: "lmde6" is LMDE cycle 6. */
const linuxMint: Target = {
  platform: 'LINUX',
  rows: (cycle) => {
    const lmde = /^lmde(\d+)$/.exec(cycle);
    return [lmde ? { product: 'lmde', cycle: lmde[1]! } : { product: 'linuxmint', cycle }];
  },
};

/** FreeBSD lists point releases (releng/X.Y, "14.3") and stable branches (stable/X, "14") together. */
const freebsd: Target = {
  platform: 'FREEBSD',
  rows: (cycle) => {
    if (/^\d+\.\d+$/.test(cycle)) return [{ product: 'freebsd', cycle }];
    if (/^\d+$/.test(cycle)) return [{ product: 'freebsd-stable', cycle }];
    return [];
  },
};

/** Windows LTSC cycles by the LTSC year the edition carries (Microsoft names 1809's LTSC "2019"). */
const LTSC_YEARS: Record<string, string> = { '1507': '2015', '1607': '2016', '1809': '2019', '21h2': '2021', '24h2': '2024' };
const LEGACY_WINDOWS = /^(\d+(?:\.\d+)?)(?:-sp(\d+))?$/;

/**
 * Windows is serviced per feature update and edition group (checks/windows/osRelease.ts names the
 * groups): "(W)" = Home/Pro, "(E)" = Enterprise/Education, "-e-lts" = Enterprise LTSC, "-iot-lts" =
 * IoT Enterprise LTSC, "-iot" = IoT Core; a Windows 10 cycle without a suffix applies to every group.
 */
const windows: Target = {
  platform: 'WINDOWS',
  withoutLatest: true,
  rows: (cycle) => {
    const m = /^(10|11)-(\w+?)(?:-(w|e|e-lts|iot-lts|iot))?$/.exec(cycle);
    if (!m) {
      const legacy = LEGACY_WINDOWS.exec(cycle);
      return legacy ? [{ product: `windows-${legacy[1]}`, cycle: legacy[2] ? `sp${legacy[2]}` : 'rtm' }] : [];
    }
    const [, major, version, suffix] = m as unknown as [string, '10' | '11', string, string | undefined];
    const named = version.toUpperCase();
    const product = (group: string) => `windows-${major}-${group}`;
    // "-iot" alone is IoT Core (the data set links windows-10-iot-core), serviced like no other edition.
    if (suffix === 'iot') return [{ product: product('iot-core'), cycle: named }];
    if (suffix === 'e-lts' || suffix === 'iot-lts') {
      const year = LTSC_YEARS[version];
      return year ? [{ product: product(suffix === 'e-lts' ? 'ltsc' : 'iot-ltsc'), cycle: year }] : [];
    }
    if (suffix === 'e') return [{ product: product('enterprise-education'), cycle: named }];
    const consumer = major === '11' ? ['home-pro'] : ['home', 'pro'];
    const groups = suffix === 'w' ? consumer : [...consumer, 'enterprise-education'];
    return groups.map((g) => ({ product: product(g), cycle: named }));
  },
};

/** Windows Server: LTSC years as the data set names them ("2022", "2012-r2"); channel releases by version ("23H2"). */
const windowsServer =
  (product: string): Target['rows'] =>
  (cycle) => [{ product, cycle: cycle.replace(/-(sac|ac)$/, '').replace(/^(\d\d)h(\d)$/, '$1H$2') }];

/**
 * Every product of category "os" in the data set, mapped or left out with the reason. Keys are the
 * os-release IDs where OS_VERSION reads one (amzn, ol, pop, photon, ...).
 */
const PRODUCTS: Record<string, Target | { skip: string }> = {
  almalinux: linux('almalinux'),
  'alpine-linux': linux('alpine'),
  'amazon-linux': linux('amzn'),
  'antix-linux': linux('antix'),
  'centos-stream': linux('centos-stream'),
  centos: linux('centos'),
  clearlinux: { skip: 'Clear Linux lists one rolling "current" cycle and was discontinued in 2025' },
  cos: { platform: 'LINUX', rows: (cycle) => [{ product: 'cos', cycle: cycle.replace(/^cos-/, '') }] },
  debian: linux('debian'),
  devuan: linux('devuan'),
  eurolinux: linux('eurolinux'),
  fedora: linux('fedora'),
  linuxmint: linuxMint,
  mageia: linux('mageia'),
  mxlinux: linux('mx'),
  nixos: linux('nixos'),
  opensuse: linux('opensuse-leap'),
  'oracle-linux': linux('ol'),
  'pop-os': linux('pop'),
  'proxmox-ve': linux('proxmox-ve'),
  // Red Hat Enterprise Linux CoreOS: each release is an OpenShift minor release (os-release VERSION_ID
  // "4.13" = OPENSHIFT_VERSION) and is supported as part of it, for as long as it. The OpenShift
  // z-stream ("4.22.9") is not in os-release, so `latest` would compare nothing the machine states.
  'red-hat-openshift': { ...linux('rhcos'), withoutLatest: true },
  rhel: linux('rhel'),
  'rocky-linux': linux('rocky'),
  slackware: linux('slackware'),
  sles: linux('sles'),
  steamos: linux('steamos'),
  'suse-linux-micro': linux('sl-micro'),
  tails: linux('tails'),
  ubuntu: linux('ubuntu'),
  'vmware-photon': linux('photon'),
  'xcp-ng': linux('xcp-ng'),
  zentyal: linux('zentyal'),
  openwrt: linux('openwrt'),
  postmarketos: linux('postmarketos'),
  yocto: { skip: 'a build system: its images carry their own distribution name and release' },
  'linux-kernel': { skip: 'the kernel, not a distribution release line' },
  'kde-plasma': { skip: 'a desktop environment, not an operating system release line' },
  macos: { platform: 'DARWIN', rows: same('DARWIN', 'macos') },
  freebsd,
  windows,
  'windows-server': { platform: 'WINDOWS', rows: windowsServer('windows-server'), withoutLatest: true },
  'windows-server-core': { platform: 'WINDOWS', rows: windowsServer('windows-server-core'), withoutLatest: true },
  'windows-nano-server': { platform: 'WINDOWS', rows: windowsServer('windows-nano-server'), withoutLatest: true },
  'windows-embedded': { platform: 'WINDOWS', rows: same('WINDOWS', 'windows-embedded'), withoutLatest: true },
  android: { skip: 'not one of the four platforms' },
  'apple-tvos': { skip: 'not one of the four platforms' },
  ios: { skip: 'not one of the four platforms' },
  ipados: { skip: 'not one of the four platforms' },
  visionos: { skip: 'not one of the four platforms' },
  watchos: { skip: 'not one of the four platforms' },
  lineageos: { skip: 'not one of the four platforms (Android)' },
  netbsd: { skip: 'not one of the four platforms' },
  openbsd: { skip: 'not one of the four platforms' },
  'ibm-aix': { skip: 'not one of the four platforms' },
  'ibm-i': { skip: 'not one of the four platforms' },
  'oracle-solaris': { skip: 'not one of the four platforms' },
  'vmware-esxi': { skip: 'a hypervisor, not one of the four platforms' },
  'big-ip': { skip: 'network appliance firmware: the agent does not run on it' },
  'cisco-ios-xe': { skip: 'network appliance firmware: the agent does not run on it' },
  fortios: { skip: 'network appliance firmware: the agent does not run on it' },
  'pan-os': { skip: 'network appliance firmware: the agent does not run on it' },
  routeros: { skip: 'network appliance firmware: the agent does not run on it' },
  'sns-firmware': { skip: 'network appliance firmware: the agent does not run on it' },
  'sns-smc': { skip: 'network appliance firmware: the agent does not run on it' },
  'netapp-ontap': { skip: 'storage appliance OS: the agent does not run on it' },
  'netbackup-appliance-os': { skip: 'backup appliance OS: the agent does not run on it' },
  'nutanix-aos': { skip: 'hyperconverged appliance OS: the agent does not run on it' },
};

/** Products outside the data set's "os" category that are an OS release line all the same (RHCOS's is OpenShift's). */
const OS_OUTSIDE_CATEGORY = new Set(['red-hat-openshift']);

/**
 * Facts endoflife.date does not carry, each from its vendor page, applied after the data set (a
 * fact for a row the data set later lists fails the update, to be dropped here):
 * - Windows 10 22H2 Home's Extended Security Updates are the consumer programme's one year
 *   (Microsoft, "Windows 10 Consumer Extended Security Updates (ESU) program"), not the commercial
 *   three years the data set gives the cycle;
 * - Windows 10 IoT Enterprise LTSC 2019 (build 17763), absent from the data set: Microsoft's
 *   lifecycle page gives its end as 2029-01-09.
 */
const VENDOR_FACTS: { product: string; cycle: string; set?: Partial<LifecycleCycle>; add?: LifecycleCycle; source: string }[] = [
  {
    product: 'windows-10-home',
    cycle: '22H2',
    set: { extendedEnd: '2026-10-13' },
    source: 'https://learn.microsoft.com/windows/whats-new/extended-security-updates',
  },
  {
    product: 'windows-10-iot-ltsc',
    cycle: '2019',
    add: { cycle: '2019', eol: '2029-01-09', releaseDate: '2018-11-13' },
    source: 'https://learn.microsoft.com/lifecycle/products/windows-10-iot-enterprise-ltsc-2019',
  },
];

class UpdateError extends Error {}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A scalar of the product files' YAML front matter: quotes and trailing comments removed. */
function scalar(raw: string): string {
  const value = raw.replace(/\s+#.*$/, '').trim();
  const quoted = /^(["'])(.*)\1$/.exec(value);
  return quoted ? quoted[2]! : value;
}

/** The front matter's top-level scalars and its `releases:` list (flat maps of scalars, as the data set writes them). */
export function parseProduct(text: string, file: string): { fields: Record<string, string>; releases: SourceRelease[] } {
  const front = /^---\n([\s\S]*?)\n---/.exec(text)?.[1];
  if (front === undefined) throw new UpdateError(`${file}: no front matter`);
  const fields: Record<string, string> = {};
  const releases: Record<string, string>[] = [];
  let inReleases = false;
  for (const line of front.split('\n')) {
    if (/^\S/.test(line)) {
      const top = /^([\w-]+):\s*(.*)$/.exec(line);
      inReleases = top?.[1] === 'releases';
      if (top && !inReleases) fields[top[1]!] = scalar(top[2]!);
      continue;
    }
    if (!inReleases || !line.trim() || /^\s*#/.test(line)) continue;
    const item = /^\s*(-\s+)?([\w-]+):\s*(.*)$/.exec(line);
    if (!item) throw new UpdateError(`${file}: cannot read release line ${JSON.stringify(line)}`);
    if (item[1]) releases.push({});
    const current = releases.at(-1);
    if (!current) throw new UpdateError(`${file}: release field before the first release`);
    current[item[2]!] = scalar(item[3]!);
  }
  return { fields, releases: releases.map((r) => release(r, file)) };
}

function dateOrFlag(value: string | undefined, field: string, file: string): string | boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  if (DATE.test(value)) return value;
  throw new UpdateError(`${file}: ${field} ${JSON.stringify(value)} is neither a date nor true/false`);
}

function release(raw: Record<string, string>, file: string): SourceRelease {
  const cycle = raw.releaseCycle;
  if (!cycle) throw new UpdateError(`${file}: a release without releaseCycle`);
  const where = `${file} ${cycle}`;
  const out: SourceRelease = { releaseCycle: cycle };
  if (raw.codename) out.codename = raw.codename;
  const releaseDate = dateOrFlag(raw.releaseDate, 'releaseDate', where);
  if (typeof releaseDate === 'string') out.releaseDate = releaseDate;
  const eol = dateOrFlag(raw.eol, 'eol', where);
  if (eol !== undefined) out.eol = eol;
  const eoes = dateOrFlag(raw.eoes, 'eoes', where);
  if (eoes !== undefined) out.eoes = eoes;
  if (raw.latest) out.latest = raw.latest;
  const latestDate = dateOrFlag(raw.latestReleaseDate, 'latestReleaseDate', where);
  if (typeof latestDate === 'string') out.latestReleaseDate = latestDate;
  return out;
}

function row(source: SourceRelease, cycle: string, target: Target, where: string): LifecycleCycle {
  if (source.eol === undefined) throw new UpdateError(`${where}: no eol`);
  const out: LifecycleCycle = { cycle, eol: source.eol };
  // "Jammy Jellyfish" is "jammy" in os-release's UBUNTU_CODENAME; "Bookworm" is "bookworm".
  const codename = source.codename?.split(/\s+/)[0]?.toLowerCase();
  if (codename && /^[a-z][a-z0-9-]*$/.test(codename)) out.codename = codename;
  if (source.releaseDate) out.releaseDate = source.releaseDate;
  if (source.eoes !== undefined) out.extendedEnd = source.eoes;
  if (!target.withoutLatest && source.latest) {
    out.latest = source.latest;
    if (source.latestReleaseDate) out.latestReleaseDate = source.latestReleaseDate;
  }
  return out;
}

function git(checkout: string, ...args: string[]): string {
  return execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8' }).trim();
}

/** The data set's commit: from git when the checkout is a work tree, else from DATASET_COMMIT (an exported archive). */
function datasetCommit(checkout: string): { commit: string; committedAt: string } {
  if (existsSync(path.join(checkout, '.git'))) {
    const [commit, committedAt] = git(checkout, 'log', '-1', '--format=%H %cs').split(' ');
    return { commit: commit!, committedAt: committedAt! };
  }
  const commit = process.env.DATASET_COMMIT;
  const committedAt = process.env.DATASET_DATE;
  if (!commit || !/^[0-9a-f]{40}$/.test(commit) || !committedAt || !DATE.test(committedAt)) {
    throw new UpdateError(`${checkout} is not a git work tree: set DATASET_COMMIT (40 hex digits) and DATASET_DATE (YYYY-MM-DD)`);
  }
  return { commit, committedAt };
}

export function buildTables(checkout: string): Record<Platform, LifecycleData> {
  const productsDir = path.join(checkout, 'products');
  if (!existsSync(productsDir)) throw new UpdateError(`${checkout} has no products/ directory: not a checkout of endoflife.date`);
  const dataset = { name: 'endoflife.date', repository: 'https://github.com/endoflife-date/endoflife.date', ...datasetCommit(checkout) };
  const empty = (): LifecycleData => ({ dataset, sources: {}, products: {} });
  const tables: Record<Platform, LifecycleData> = { LINUX: empty(), DARWIN: empty(), WINDOWS: empty(), FREEBSD: empty() };
  const seen = new Set<string>();
  for (const name of readdirSync(productsDir)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    const file = `products/${name}`;
    const { fields, releases } = parseProduct(readFileSync(path.join(productsDir, name), 'utf8'), file);
    const key = name.slice(0, -'.md'.length);
    if (fields.category !== 'os' && !OS_OUTSIDE_CATEGORY.has(key)) continue;
    seen.add(key);
    const target = PRODUCTS[key];
    if (!target)
      throw new UpdateError(`${file}: an OS product this script does not map; add it to PRODUCTS (mapped or skipped with a reason)`);
    if ('skip' in target) continue;
    const table = tables[target.platform];
    for (const source of releases) {
      const rows = target.rows(source.releaseCycle);
      if (rows.length === 0) throw new UpdateError(`${file}: cannot map cycle ${JSON.stringify(source.releaseCycle)}`);
      for (const { product, cycle } of rows) {
        const list = (table.products[product] ??= []);
        if (list.some((c) => c.cycle === cycle)) throw new UpdateError(`${file}: cycle ${cycle} of ${product} twice`);
        list.push(row(source, cycle, target, `${file} ${source.releaseCycle}`));
        const sources = table.sources[product] ?? [];
        if (!sources.includes(file)) table.sources[product] = [...sources, file];
      }
    }
  }
  const missing = Object.keys(PRODUCTS).filter((k) => !seen.has(k));
  if (missing.length) throw new UpdateError(`products this script maps are not OS products of the checkout: ${missing.join(', ')}`);
  for (const fact of VENDOR_FACTS) {
    const table = tables.WINDOWS;
    const rows = table.products[fact.product];
    const cycle = rows?.find((c) => c.cycle === fact.cycle);
    if (fact.add) {
      if (!rows || cycle)
        throw new UpdateError(`vendor row ${fact.product} ${fact.cycle}: the data set lists it now (or not the product): drop it`);
      rows.push(fact.add);
    } else {
      if (!cycle) throw new UpdateError(`vendor fact for ${fact.product} ${fact.cycle}: the data set no longer lists that cycle`);
      Object.assign(cycle, fact.set);
    }
    table.sources[fact.product] = [...(table.sources[fact.product] ?? []), fact.source];
  }
  return tables;
}

const LICENSE_NOTE =
  'The data below is generated from endoflife.date, MIT License, Copyright 2020 endoflife.date contributors: see checks/LICENSE.endoflife-date.';

async function render(platform: Platform, data: LifecycleData): Promise<string> {
  const name = `${PLATFORMS[platform]}Lifecycle`;
  const text = [
    `// Generated by scripts/lifecycle-update.ts (npm run lifecycle:update -- <checkout of endoflife-date/endoflife.date>): do not edit.`,
    `// ${LICENSE_NOTE}`,
    `// Each product's source files are in \`sources\`; \`eol\` is the end of regular security support (true: ended, date`,
    `// not published; false: no end announced), \`extendedEnd\` the end of the paid or community extension (the data`,
    `// set's "eoes"), counted only when the policy accepts it. Administrators extend or replace it in their policy file.`,
    `import type { LifecycleData } from '../lifecycleTable';`,
    ``,
    `export const ${name}: LifecycleData = ${JSON.stringify(data)};`,
  ].join('\n');
  const target = path.join(ROOT, 'checks', PLATFORMS[platform], 'lifecycle.ts');
  return format(text, { ...(await resolveConfig(target)), filepath: target });
}

async function main(): Promise<void> {
  const checkout = process.argv[2];
  if (!checkout) throw new UpdateError('usage: npm run lifecycle:update -- <path to a checkout of endoflife-date/endoflife.date>');
  const tables = buildTables(path.resolve(checkout));
  const rendered = await Promise.all((Object.keys(PLATFORMS) as Platform[]).map(async (p) => [p, await render(p, tables[p])] as const));
  // Every table rendered before any is written: a failure leaves the old tables in place.
  for (const [platform, text] of rendered) {
    const target = path.join(ROOT, 'checks', PLATFORMS[platform], 'lifecycle.ts');
    const partial = `${target}.${process.pid}.tmp`;
    writeFileSync(partial, text);
    renameSync(partial, target);
    console.log(`${path.relative(ROOT, target)}: ${Object.keys(tables[platform].products).length} products`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof UpdateError ? `lifecycle:update: ${err.message}` : err);
    process.exitCode = 1;
  });
}
