// The state directory's layout: which one (contract: flag > DEVICE_AGENT_STATE_DIR > per-OS default, per-user
// for non-root) and what lives in it. docs/agent.md describes the layout.
import { lstat, readdir, readlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { platformPaths, type PlatformPaths } from '../../platform/paths';
import { isPrivileged } from '../../platform/privilege';
import { systemServiceStatePresent } from '../../platform/serviceState';
import { assertTrustedEntry, isCode, ownerUid } from './atomicFile';
import { ElevationRequiredError } from '../errors';

export interface StateLayout {
  readonly dir: string;
  /** Enrollment record (enrollmentRecord.ts): server URL, key store, enrollment time. */
  readonly enrollment: string;
  /** The API key, with the `file` key store only. */
  readonly apiKey: string;
  /** Runtime status (statusFile.ts): written only through StatusFile, under `statusLock`. */
  readonly status: string;
  /** Serialises writers of status.json across processes (the daemon, enroll, unenroll, wipes). */
  readonly statusLock: string;
  /** The daemon's posture queue. */
  readonly queueDir: string;
  /** The policy the server last served (serverPolicy.ts). */
  readonly serverPolicy: string;
  /** An enrollment secret's registration whose token is not yet spent (pendingRegistration.ts). */
  readonly registration: string;
  /** Serialises enroll, unenroll and credential wipes. */
  readonly enrollmentLock: string;
  /** Held by the running daemon. */
  readonly daemonLock: string;
}

export function stateLayout(dir: string): StateLayout {
  return {
    dir,
    enrollment: join(dir, 'enrollment.json'),
    apiKey: join(dir, 'api-key'),
    status: join(dir, 'status.json'),
    statusLock: join(dir, 'status.lock'),
    queueDir: join(dir, 'queue'),
    serverPolicy: join(dir, 'server-policy.json'),
    registration: join(dir, 'registration.json'),
    enrollmentLock: join(dir, 'enrollment.lock'),
    daemonLock: join(dir, 'daemon.lock'),
  };
}

/**
 * Where the Windows service wrapper (WinSW) writes the service's logs: a subdirectory of the state
 * directory, so the logs share its owner-only ACL. `path` joins in the target's style (win32 when a
 * Windows unit is generated elsewhere).
 */
export function serviceLogDir(stateDir: string, path: { join(...parts: string[]): string } = { join }): string {
  return path.join(stateDir, 'logs');
}

export interface StateDirContext {
  /** --state-dir or DEVICE_AGENT_STATE_DIR, when given. */
  explicit?: string;
  env?: NodeJS.ProcessEnv;
  privileged?: boolean;
  systemStatePresent?: boolean;
  paths?: PlatformPaths;
  home?: string;
}

/**
 * The state directory this process must use. A non-root user without an explicit directory gets a
 * per-user one, except when the system service's state exists: then the user is told to re-run
 * elevated, so that nobody enrolls a per-user state that the service cannot see.
 */
export function resolveStateDir(context: StateDirContext = {}): string {
  if (context.explicit !== undefined && context.explicit !== '') return resolve(context.explicit);
  const env = context.env ?? process.env;
  const paths = context.paths ?? platformPaths();
  const systemDir = paths.systemStateDir(env);
  if (context.privileged ?? isPrivileged()) return systemDir;
  if (context.systemStatePresent ?? systemServiceStatePresent(env)) {
    throw new ElevationRequiredError(
      `the device-agent service's state is in ${systemDir} and needs administrator rights: ` +
        're-run this command with sudo (or from an elevated shell), or pass --state-dir for a separate per-user state',
    );
  }
  return paths.userStateDir(env, context.home ?? homedir());
}

/**
 * Refuses (UntrustedStateError, exit 2) a state directory that another user could have changed: the
 * directory or anything in it owned by another user, writable by group or others, or a symbolic link.
 * A directory that does not exist yet is fine: it will be created owner-only. Every command that
 * reads or writes the state calls this first; nothing is repaired, so nothing follows a planted link.
 */
export async function verifyStateDir(dir: string): Promise<void> {
  const uid = ownerUid();
  if (uid === undefined) return;
  const layout = stateLayout(dir);
  const locks = new Set([layout.daemonLock, layout.enrollmentLock, layout.statusLock]);
  const walk = async (path: string): Promise<void> => {
    let stats;
    try {
      stats = await lstat(path);
    } catch (err) {
      // Not created yet (ENOTDIR: cannot be, which creating it reports), or removed meanwhile (a queue segment).
      if (isCode(err, 'ENOENT', 'ENOTDIR')) return;
      throw err;
    }
    // A lock is a symbolic link whose target is the holder's pid (lock.ts: it needs no free space).
    // It is read, never followed; one of ours still has to be owned by us and name only a pid.
    if (locks.has(path) && stats.isSymbolicLink()) {
      const target = await readlink(path).catch((err: unknown) => {
        if (isCode(err, 'ENOENT')) return null; // released meanwhile
        throw err;
      });
      if (target === null) return;
      if (/^\d+$/.test(target)) return assertTrustedEntry(path, stats, uid, { link: true });
    }
    assertTrustedEntry(path, stats, uid);
    if (!stats.isDirectory()) return;
    const names = await readdir(path).catch((err: unknown) => {
      if (isCode(err, 'ENOENT')) return [];
      throw err;
    });
    for (const name of names) await walk(join(path, name));
  };
  await walk(dir);
}
