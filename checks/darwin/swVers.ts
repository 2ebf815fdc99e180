// `sw_vers` output, shared by OS_VERSION and host identity. sw_vers, unlike os.release() (the
// Darwin kernel version) or SYSTEM_VERSION_COMPAT's "10.16", always names the real release.
import type { CheckContext, CommandResult } from '../types';

export const SW_VERS = '/usr/bin/sw_vers';

/** `sw_vers`, run once per cycle for every check that needs the release. */
export function runSwVers(ctx: CheckContext): Promise<CommandResult> {
  return ctx.shared('darwin:sw_vers', () => ctx.host.run(SW_VERS, []));
}

/** The release from a `sw_vers` run, or null when it did not answer with one. */
export function releaseFrom(result: CommandResult): MacRelease | null {
  return result.error || result.exitCode !== 0 ? null : parseSwVers(result.stdout);
}

export interface MacRelease {
  /** "macOS" (11+) or "Mac OS X" (10.x). */
  productName: string;
  /** "15.1", "14.5", "10.15.7". */
  productVersion: string;
  /** "24B83". */
  buildVersion?: string;
  /** Rapid Security Response suffix such as "(a)". */
  productVersionExtra?: string;
  /** Lifecycle cycle: the major version from 11 on ("15"), major.minor before ("10.15"). */
  cycle: string;
}

/** Parses `sw_vers` ("ProductName:\tmacOS" …); null unless it names a macOS release. */
export function parseSwVers(stdout: string): MacRelease | null {
  const fields: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^(ProductName|ProductVersion|ProductVersionExtra|BuildVersion):\s+(\S.*?)\s*$/.exec(line);
    if (m) fields[m[1]!] = m[2]!;
  }
  return toMacRelease(fields);
}

/**
 * Validates the SystemVersion fields (sw_vers names them ProductName, ProductVersion,
 * BuildVersion, ProductVersionExtra; SystemVersion.plist says ProductBuildVersion).
 */
export function toMacRelease(fields: Record<string, string | undefined>): MacRelease | null {
  const productName = fields.ProductName;
  const productVersion = fields.ProductVersion;
  if ((productName !== 'macOS' && productName !== 'Mac OS X') || !productVersion) return null;
  const version = /^(\d+)(?:\.(\d+)(?:\.\d+)?)?$/.exec(productVersion);
  if (!version) return null;
  const major = Number(version[1]);
  const cycle = major >= 11 ? String(major) : `${major}.${version[2] ?? '0'}`;
  const release: MacRelease = { productName, productVersion, cycle };
  const build = fields.BuildVersion ?? fields.ProductBuildVersion;
  const extra = fields.ProductVersionExtra;
  if (build && /^[0-9A-Za-z]+$/.test(build)) release.buildVersion = build;
  if (extra && /^\([a-z]\)$/.test(extra)) release.productVersionExtra = extra;
  return release;
}

/** As a person writes it: "macOS 15.1", "macOS 13.3.1 (a)". */
export function describeMacRelease(release: MacRelease): string {
  return [release.productName, release.productVersion, release.productVersionExtra].filter(Boolean).join(' ');
}
