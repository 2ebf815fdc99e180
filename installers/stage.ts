// What the package builders share (installers/build.ts for the agent, installers/server.ts for the
// server): files staged under a root as the target system will see them, the build tools run
// quietly, and the architecture names each package format uses.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface StagedFile {
  /** Absolute path on the target system. */
  path: string;
  mode: number;
  /** Text to write, or a file to copy, or a symbolic link target. */
  content?: string;
  from?: string;
  link?: string;
}

/** Runs a build tool; its output is shown only when it fails. */
export function tool(file: string, args: readonly string[], cwd?: string): void {
  try {
    execFileSync(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`${file} failed:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`, { cause: err });
  }
}

export function stage(root: string, files: readonly StagedFile[]): void {
  for (const file of files) {
    const target = join(root, file.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    if (file.link !== undefined) symlinkSync(file.link, target);
    else if (file.from !== undefined) copyFileSync(file.from, target);
    else if (file.content !== undefined) writeFileSync(target, file.content);
    else mkdirSync(target, { recursive: true });
    if (file.link === undefined) chmodSync(target, file.mode);
  }
}

export type LinuxArch = 'x64' | 'arm64';
const ARCH_NAMES: Record<LinuxArch, { deb: string; rpm: string }> = {
  x64: { deb: 'amd64', rpm: 'x86_64' },
  arm64: { deb: 'arm64', rpm: 'aarch64' },
};

/** Installed size of a staged root (Debian's Installed-Size), without its DEBIAN/ directory. */
function installedKiB(root: string): number {
  let bytes = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'DEBIAN') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) bytes += statSync(path).size;
    }
  };
  walk(root);
  return Math.ceil(bytes / 1024);
}

/** A Linux package: what it is, what it installs, and how it is built. */
export interface LinuxPackage {
  name: string;
  version: string;
  arch: LinuxArch;
  summary: string;
  longDescription: readonly string[];
  files: readonly StagedFile[];
  outDir: string;
  /** xz for releases; gzip makes test builds several times faster. */
  compression?: 'xz' | 'gzip';
}

/** Debian: the control fields beyond the common ones, the maintainer scripts, the conffiles. */
interface DebParts {
  section: string;
  depends: string;
  /** Directory holding postinst, prerm and postrm. */
  scriptsDir: string;
  conffiles?: readonly string[];
}

export function buildDebPackage(pkg: LinuxPackage, deb: DebParts): string {
  const work = mkdtempSync(join(tmpdir(), `${pkg.name}-deb-`));
  try {
    const root = join(work, 'root');
    stage(root, pkg.files);
    const control = [
      `Package: ${pkg.name}`,
      `Version: ${pkg.version}`,
      `Architecture: ${ARCH_NAMES[pkg.arch].deb}`,
      'Maintainer: device-agent maintainers <maintainers@device-agent.invalid>',
      `Section: ${deb.section}`,
      'Priority: optional',
      `Depends: ${deb.depends}`,
      `Installed-Size: ${installedKiB(root)}`,
      `Description: ${pkg.summary}`,
      ...pkg.longDescription.map((line) => ` ${line}`),
      '',
    ].join('\n');
    stage(root, [
      { path: '/DEBIAN/control', mode: 0o644, content: control },
      ...(deb.conffiles ? [{ path: '/DEBIAN/conffiles', mode: 0o644, content: deb.conffiles.map((path) => `${path}\n`).join('') }] : []),
      ...['postinst', 'prerm', 'postrm'].map((name) => ({ path: `/DEBIAN/${name}`, mode: 0o755, from: join(deb.scriptsDir, name) })),
    ]);
    const out = join(pkg.outDir, `${pkg.name}_${pkg.version}_${ARCH_NAMES[pkg.arch].deb}.deb`);
    mkdirSync(pkg.outDir, { recursive: true });
    const compression = pkg.compression === 'gzip' ? ['-Zgzip', '-z1'] : ['-Zxz'];
    // dpkg-deb never strips: an executable's injected blob stays intact.
    tool('dpkg-deb', ['--root-owner-group', ...compression, '--build', root, out]);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** RPM: requirements, scriptlets (spec text from %post on), and how %files lists the staged files. */
interface RpmParts {
  requires: readonly string[];
  scriptlets: readonly string[];
  /** Directories packaged whole, with the staged modes (their files are not listed one by one). */
  wholeDirs?: readonly string[];
  configFiles?: readonly string[];
}

function rpmSpec(pkg: LinuxPackage, rpm: RpmParts): string {
  const whole = rpm.wholeDirs ?? [];
  const fileLines = pkg.files
    .filter((file) => !whole.some((dir) => file.path === dir || file.path.startsWith(`${dir}/`)))
    .map((file) => {
      if (file.link !== undefined) return file.path;
      const dir = file.from === undefined && file.content === undefined ? '%dir ' : '';
      const config = rpm.configFiles?.includes(file.path) ? '%config(noreplace) ' : '';
      const doc = file.path.startsWith('/usr/share/doc/') ? '%doc ' : '';
      return `${dir}${config}${doc}%attr(${file.mode.toString(8).padStart(4, '0')},root,root) ${file.path}`;
    });
  return [
    // The packages carry Node runtimes (one with an injected blob): no stripping, no debug split, no
    // build-id links, no dependency scan of a Node runtime (node-ecosystem.md §8).
    '%global __os_install_post %{nil}',
    '%global __strip /bin/true',
    '%global debug_package %{nil}',
    '%define _build_id_links none',
    '',
    `Name: ${pkg.name}`,
    `Version: ${pkg.version}`,
    'Release: 1',
    `Summary: ${pkg.summary}`,
    'License: Apache-2.0',
    'AutoReqProv: no',
    ...rpm.requires.map((requirement) => `Requires: ${requirement}`),
    '',
    '%description',
    ...pkg.longDescription,
    '',
    '%install',
    'cp -a %{stage}/. %{buildroot}/',
    '',
    '%files',
    ...whole.map((dir) => `%attr(-,root,root) ${dir}`),
    ...fileLines,
    '',
    ...rpm.scriptlets,
    '',
  ].join('\n');
}

export function buildRpmPackage(pkg: LinuxPackage, rpm: RpmParts): string {
  const work = mkdtempSync(join(tmpdir(), `${pkg.name}-rpm-`));
  try {
    const root = join(work, 'root');
    stage(root, pkg.files);
    const spec = join(work, `${pkg.name}.spec`);
    writeFileSync(spec, rpmSpec(pkg, rpm));
    const rpmArch = ARCH_NAMES[pkg.arch].rpm;
    tool('rpmbuild', [
      '-bb',
      '--quiet',
      '--target',
      `${rpmArch}-linux`,
      '--define',
      `_topdir ${join(work, 'top')}`,
      '--define',
      `stage ${root}`,
      '--define',
      `_binary_payload ${pkg.compression === 'gzip' ? 'w1.gzdio' : 'w6.xzdio'}`,
      spec,
    ]);
    const name = `${pkg.name}-${pkg.version}-1.${rpmArch}.rpm`;
    const out = join(pkg.outDir, name);
    mkdirSync(pkg.outDir, { recursive: true });
    copyFileSync(join(work, 'top', 'RPMS', rpmArch, name), out);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** RPM %postun: the unit file is gone, so systemd forgets the unit now (as the Debian postrm does). */
export const RELOAD_AFTER_REMOVAL = 'if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi';
