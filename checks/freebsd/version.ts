// freebsd-version(1): installed kernel (-k), running kernel (-r) and userland (-u), printed in
// that order whatever the order of the flags. Shared by OS_VERSION and the host identity.
import type { CheckContext, CommandResult, Host } from '../types';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

const FREEBSD_VERSION = '/bin/freebsd-version';

/** A FreeBSD release name such as "14.1-RELEASE-p5", "14.2-STABLE" or "15.0-RC2". */
export interface FreebsdVersion {
  major: number;
  minor: number;
  /** RELEASE, STABLE, CURRENT, PRERELEASE, or a pre-release tag: ALPHA1, BETA2, RC3. */
  branch: string;
  /** Security patch level: -pN, 0 when absent. */
  patch: number;
  text: string;
}

export function parseFreebsdVersion(text: string): FreebsdVersion | null {
  const match = /^(\d+)\.(\d+)-(RELEASE|STABLE|CURRENT|PRERELEASE|(?:ALPHA|BETA|RC)\d*)(?:-p(\d+))?$/.exec(text.trim());
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), branch: match[3]!, patch: Number(match[4] ?? 0), text: text.trim() };
}

export interface VersionProbe {
  kru: CommandResult;
  /** Only when -k failed because no kernel is installed (a jail): -r and -u alone. */
  ru?: CommandResult;
}

export async function readVersions(host: Host): Promise<VersionProbe> {
  const kru = await host.run(FREEBSD_VERSION, ['-kru']);
  if (kru.exitCode !== 0 && !kru.error && /unable to locate kernel/.test(kru.stderr)) {
    return { kru, ru: await host.run(FREEBSD_VERSION, ['-ru']) };
  }
  return { kru };
}

/** freebsd-version -kru once per cycle, for OS_VERSION and AUTO_UPDATE. */
export function sharedVersions(ctx: CheckContext): Promise<VersionProbe> {
  return ctx.shared('freebsd:version', () => readVersions(ctx.host));
}

export type Versions =
  { ok: true; installedKernel: string | null; runningKernel: string; userland: string } | { ok: false; reason: CommandFailureReason };

export function interpretVersions(probe: VersionProbe): Versions {
  const result = probe.ru ?? probe.kru;
  if (result.error || result.exitCode !== 0) return { ok: false, reason: commandFailureReason(result) };
  const lines = result.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const expected = probe.ru ? 2 : 3;
  if (lines.length !== expected) return { ok: false, reason: 'parse_error' };
  const [installedKernel, runningKernel, userland] = probe.ru ? [null, lines[0]!, lines[1]!] : [lines[0]!, lines[1]!, lines[2]!];
  return { ok: true, installedKernel, runningKernel, userland };
}
