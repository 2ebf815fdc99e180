// macOS: a LaunchDaemon in the system domain, its output in a file under /Library/Logs that
// newsyslog rotates.
import { posix } from 'node:path';
import type { PlanStep } from './plan';
import { plist } from './plist';
import { daemonArgs, SERVICE_NAME, type ServiceModule, type ServiceSpec, posixProgramLayout } from './types';

export const LAUNCHD_LABEL = 'org.device-agent.agent';
export const LAUNCHD_PLIST = `/Library/LaunchDaemons/${LAUNCHD_LABEL}.plist`;
const LOG_DIR = '/Library/Logs/device-agent';
export const LOG_FILE = posix.join(LOG_DIR, `${SERVICE_NAME}.log`);
export const NEWSYSLOG_CONF = `/etc/newsyslog.d/${SERVICE_NAME}.conf`;

export function launchdPlist(spec: ServiceSpec): string {
  return plist({
    Label: LAUNCHD_LABEL,
    ProgramArguments: daemonArgs(spec),
    RunAtLoad: true,
    // `run` exits 0 only when asked to stop; any other exit is a failure to recover from.
    KeepAlive: { SuccessfulExit: false },
    ThrottleInterval: 10,
    ProcessType: 'Background',
    Umask: 0o077,
    StandardOutPath: LOG_FILE,
    StandardErrorPath: LOG_FILE,
  });
}

/**
 * newsyslog(8) entry: rotate at 10 MiB, keep 5 gzipped archives, no signal (launchd owns the
 * descriptor; the daemon reopens nothing). Fields: file, owner:group, mode, count, size (KiB),
 * when, flags.
 */
export function newsyslogConf(): string {
  return [
    `# device-agent: rotate the LaunchDaemon's log (${LAUNCHD_PLIST})`,
    '# logfilename                                   owner:group  mode count size  when  flags',
    `${LOG_FILE.padEnd(47)} root:wheel   640  5     10240 *     NZ`,
    '',
  ].join('\n');
}

export const launchdService: ServiceModule = {
  platform: 'DARWIN',
  style: 'posix',
  programLayout: () => posixProgramLayout('/usr/local', 'libexec'),
  installSteps(spec: ServiceSpec): PlanStep[] {
    return [
      { kind: 'mkdir', path: LOG_DIR, mode: 0o755 },
      { kind: 'write', path: NEWSYSLOG_CONF, content: newsyslogConf(), mode: 0o644 },
      { kind: 'write', path: LAUNCHD_PLIST, content: launchdPlist(spec), mode: 0o644 },
      // A re-install replaces a running job: unload the old definition first.
      { kind: 'run', argv: ['launchctl', 'bootout', `system/${LAUNCHD_LABEL}`], mayFail: true },
      { kind: 'run', argv: ['launchctl', 'enable', `system/${LAUNCHD_LABEL}`] },
      { kind: 'run', argv: ['launchctl', 'bootstrap', 'system', LAUNCHD_PLIST] },
    ];
  },
  uninstallSteps(): PlanStep[] {
    return [
      { kind: 'run', argv: ['launchctl', 'bootout', `system/${LAUNCHD_LABEL}`], mayFail: true },
      { kind: 'remove', path: LAUNCHD_PLIST },
      { kind: 'remove', path: NEWSYSLOG_CONF },
    ];
  },
  logLocation: () => `${LOG_FILE} (rotated by newsyslog)`,
};
