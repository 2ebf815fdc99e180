// When packages last changed on this machine: the files and directories each package manager
// rewrites on every install, upgrade or removal. OS_VERSION judges rolling distributions by it;
// AUTO_UPDATE judges a cron-driven updater (apk, zypper) by it.
import type { CheckContext } from '../types';
import type { PackageChange as DatabaseChange } from '../updateEffect';

/** Package databases every install or upgrade rewrites, by package manager. */
const PACKAGE_DATABASES: readonly (readonly [manager: string, path: string])[] = [
  ['pacman', '/var/lib/pacman/local'],
  ['portage', '/var/db/pkg'],
  ['xbps', '/var/db/xbps'],
  ['apk', '/lib/apk/db/installed'],
  ['rpm', '/var/lib/rpm'],
  ['rpm', '/usr/lib/sysimage/rpm'],
  // libzypp appends a line per package installed or removed (and per repository change).
  ['zypper', '/var/log/zypp/history'],
  ['nix', '/nix/var/nix/profiles'],
  ['dpkg', '/var/lib/dpkg/status'],
];

export interface PackageChange extends DatabaseChange {
  manager: string;
}

/** The newest change among the package databases present, of the given managers (all when none given). */
export async function packageChange(ctx: CheckContext, managers?: readonly string[]): Promise<PackageChange | undefined> {
  const databases = PACKAGE_DATABASES.filter(([manager]) => !managers || managers.includes(manager));
  const stats = await Promise.all(databases.map(([, path]) => ctx.host.stat(path)));
  let newest: PackageChange | undefined;
  stats.forEach((s, i) => {
    if (s.ok && s.mtimeMs !== undefined && (!newest || s.mtimeMs > newest.changedMs)) {
      const [manager, path] = databases[i]!;
      newest = { manager, path, changedMs: s.mtimeMs };
    }
  });
  return newest;
}
