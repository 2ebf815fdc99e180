// os-release(5), the Debian point release and the running kernel: what the OS says it is. Shared
// by OS_VERSION, AUTO_UPDATE (package-manager family) and host identity (os_version).
import type { CheckContext, Host } from '../types';
import { parseShellAssignments } from '../text';

export interface OsRelease {
  id: string;
  idLike: string[];
  name?: string;
  prettyName?: string;
  version?: string;
  versionId?: string;
  versionCodename?: string;
  buildId?: string;
  /** SUPPORT_END: the day the distribution stops supporting this release (YYYY-MM-DD). */
  supportEnd?: string;
  /** /etc/debian_version when it refines VERSION_ID ("12.11" for VERSION_ID "12"). */
  pointRelease?: string;
  /** The base a derivative declares: UBUNTU_CODENAME, DEBIAN_CODENAME, PLATFORM_ID ("platform:el9"), CPE_NAME, RHEL_VERSION (RHCOS: "8.0"). */
  ubuntuCodename?: string;
  debianCodename?: string;
  platformId?: string;
  cpeName?: string;
  rhelVersion?: string;
  /** /etc/debian_version on a derivative: "12.5" (a Debian point release) or "bookworm/sid". */
  debianVersion?: string;
}

export type OsReleaseFacts = { ok: true; release: OsRelease; kernel?: string } | { ok: false; error: string };

const OS_RELEASE_FILES = ['/etc/os-release', '/usr/lib/os-release'] as const;

export function parseOsRelease(text: string, debianVersion?: string): OsRelease {
  const fields = parseShellAssignments(text);
  const release: OsRelease = {
    // os-release(5): ID defaults to "linux" when absent.
    id: (fields.ID ?? 'linux').toLowerCase(),
    idLike: (fields.ID_LIKE ?? '').toLowerCase().split(/\s+/).filter(Boolean),
  };
  if (fields.NAME) release.name = fields.NAME;
  if (fields.PRETTY_NAME) release.prettyName = fields.PRETTY_NAME;
  if (fields.VERSION) release.version = fields.VERSION;
  if (fields.VERSION_ID) release.versionId = fields.VERSION_ID;
  if (fields.VERSION_CODENAME) release.versionCodename = fields.VERSION_CODENAME;
  if (fields.BUILD_ID) release.buildId = fields.BUILD_ID;
  if (fields.SUPPORT_END) release.supportEnd = fields.SUPPORT_END;
  if (fields.UBUNTU_CODENAME) release.ubuntuCodename = fields.UBUNTU_CODENAME.toLowerCase();
  if (fields.DEBIAN_CODENAME) release.debianCodename = fields.DEBIAN_CODENAME.toLowerCase();
  if (fields.PLATFORM_ID) release.platformId = fields.PLATFORM_ID;
  if (fields.CPE_NAME) release.cpeName = fields.CPE_NAME;
  if (fields.RHEL_VERSION) release.rhelVersion = fields.RHEL_VERSION;
  const point = debianVersion?.trim();
  if (point && /^[\w./-]{1,40}$/.test(point)) release.debianVersion = point;
  // /etc/debian_version holds "12.11" on a release and "trixie/sid" on testing: only a numeric
  // refinement of VERSION_ID is a point release.
  if (point && release.versionId && /^\d+(\.\d+)+$/.test(point) && point.startsWith(`${release.versionId}.`)) {
    release.pointRelease = point;
  }
  return release;
}

/**
 * The most precise version the release states: the Debian point release, else a dotted version
 * in VERSION ("24.04.1 LTS" on Ubuntu), else VERSION_ID.
 */
export function preciseVersion(release: OsRelease): string | undefined {
  if (release.pointRelease) return release.pointRelease;
  const fromVersion = release.version ? /^(\d+(?:\.\d+)+)/.exec(release.version)?.[1] : undefined;
  if (fromVersion && release.versionId && fromVersion.startsWith(release.versionId)) return fromVersion;
  return release.versionId;
}

/**
 * The OS as a person writes it: PRETTY_NAME, refined with the precise version when PRETTY_NAME
 * names only the cycle ("Debian GNU/Linux 12 (bookworm)" -> "Debian GNU/Linux 12.11 (bookworm)",
 * "Alpine Linux v3.20" -> "Alpine Linux v3.20.3"); NAME + VERSION, then "Linux <kernel>" otherwise.
 */
export function describeOs(release: OsRelease | undefined, kernel?: string): string {
  const precise = release ? preciseVersion(release) : undefined;
  const base =
    release?.prettyName ?? (release?.name ? [release.name, release.version ?? release.versionId].filter(Boolean).join(' ') : undefined);
  if (!base) return kernel ? `Linux ${kernel}` : 'Linux';
  if (!precise || base.includes(precise)) return base;
  // Refine the first version token that the precise version extends ("12" -> "12.11").
  const token = [...base.matchAll(/(?<![\d.])\d+(?:\.\d+)*(?![\d.])/g)].find((m) => precise.startsWith(`${m[0]}.`));
  if (!token || token.index === undefined) return base;
  return base.slice(0, token.index) + precise + base.slice(token.index + token[0].length);
}

export async function readOsRelease(host: Host): Promise<OsReleaseFacts> {
  let text: string | undefined;
  let error = 'not_found';
  for (const file of OS_RELEASE_FILES) {
    const result = await host.readFile(file);
    if (result.ok) {
      text = result.text;
      break;
    }
    if (result.error !== 'not_found') error = result.error;
  }
  if (text === undefined) return { ok: false, error };
  const [debian, kernel] = await Promise.all([host.readFile('/etc/debian_version'), host.readFile('/proc/sys/kernel/osrelease')]);
  const facts: OsReleaseFacts = { ok: true, release: parseOsRelease(text, debian.ok ? debian.text : undefined) };
  if (kernel.ok && kernel.text.trim()) facts.kernel = kernel.text.trim();
  return facts;
}

/** os-release read once per cycle. */
export function osRelease(ctx: CheckContext): Promise<OsReleaseFacts> {
  return ctx.shared('linux.osRelease', () => readOsRelease(ctx.host));
}

/** The distribution and the ones it derives from, most specific first. */
export function family(release: OsRelease): string[] {
  return [release.id, ...release.idLike];
}
