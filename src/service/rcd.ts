// FreeBSD: an rc.d script that runs the agent under daemon(8), which restarts it when it fails and
// sends its output to syslog; a syslogd rule puts it in its own file, rotated by newsyslog.
import { InvalidInputError } from '../agent/errors';
import type { PlanStep } from './plan';
import { SERVICE_DESCRIPTION, SERVICE_NAME, type ServiceModule, type ServiceSpec, posixProgramLayout } from './types';

/** rc.subr names are shell identifiers: no hyphen. */
export const RC_NAME = 'device_agent';
export const RC_SCRIPT = `/usr/local/etc/rc.d/${RC_NAME}`;
export const SYSLOG_CONF = `/usr/local/etc/syslog.d/${SERVICE_NAME}.conf`;
export const NEWSYSLOG_CONF = `/usr/local/etc/newsyslog.conf.d/${SERVICE_NAME}.conf`;
const LOG_FILE = `/var/log/${SERVICE_NAME}.log`;

// rc.subr evaluates command_args with the shell: only words that need no quoting at all go in.
const RC_SAFE = /^[A-Za-z0-9_.,:/+=@-]+$/;

function rcWord(word: string): string {
  if (!RC_SAFE.test(word)) {
    throw new InvalidInputError(
      `an rc.d script cannot carry ${JSON.stringify(word)} safely: use a path made of letters, digits and . _ - + / only`,
    );
  }
  return word;
}

export function rcScript(spec: ServiceSpec): string {
  const [program, ...programArgs] = spec.program.map(rcWord);
  const agentArgs = [...programArgs, 'run', '--state-dir', `\${${RC_NAME}_state_dir}`].join(' ');
  return [
    '#!/bin/sh',
    '#',
    `# PROVIDE: ${RC_NAME}`,
    '# REQUIRE: LOGIN NETWORKING syslogd',
    '# KEYWORD: shutdown',
    '#',
    `# ${SERVICE_DESCRIPTION}.`,
    `# Enable with: sysrc ${RC_NAME}_enable=YES`,
    `# ${RC_NAME}_state_dir: the agent's state directory (default ${rcWord(spec.stateDir)}).`,
    '',
    '. /etc/rc.subr',
    '',
    `name="${RC_NAME}"`,
    `rcvar="${RC_NAME}_enable"`,
    `desc="${SERVICE_DESCRIPTION}"`,
    '',
    'load_rc_config "$name"',
    `: \${${RC_NAME}_enable:="NO"}`,
    `: \${${RC_NAME}_state_dir:="${spec.stateDir}"}`,
    '',
    // daemon(8) supervises the agent: -P its own pid (rc.subr stops it with SIGTERM, which it passes
    // on), -R restart 10 s after an exit, -S output to syslog with the tag below.
    'pidfile="/var/run/${name}.pid"',
    'command="/usr/sbin/daemon"',
    `command_args="-P \${pidfile} -R 10 -S -l daemon -s info -T ${SERVICE_NAME} ${program} ${agentArgs}"`,
    '',
    'run_rc_command "$1"',
    '',
  ].join('\n');
}

/** syslogd(8) rule: the agent's messages (tag device-agent) in their own file. */
export function syslogConf(): string {
  return [
    `# ${SERVICE_NAME}: daemon(8) sends the agent's output here (tag ${SERVICE_NAME})`,
    `!${SERVICE_NAME}`,
    `*.*\t\t\t\t\t\t${LOG_FILE}`,
    '!*',
    '',
  ].join('\n');
}

/** newsyslog(8): rotate at 10 MiB, keep 5 bzip2 archives, create the file; syslogd is signalled. */
export function newsyslogConf(): string {
  return [
    '# logfilename              [owner:group]  mode count size  when  flags',
    `${LOG_FILE.padEnd(26)} root:wheel     600  5     10240 *     JC`,
    '',
  ].join('\n');
}

export const rcdService: ServiceModule = {
  platform: 'FREEBSD',
  style: 'posix',
  programLayout: () => posixProgramLayout('/usr/local', 'libexec'),
  installSteps(spec: ServiceSpec): PlanStep[] {
    return [
      { kind: 'write', path: RC_SCRIPT, content: rcScript(spec), mode: 0o755 },
      { kind: 'write', path: SYSLOG_CONF, content: syslogConf(), mode: 0o644 },
      { kind: 'write', path: NEWSYSLOG_CONF, content: newsyslogConf(), mode: 0o644 },
      { kind: 'run', argv: ['service', 'syslogd', 'reload'] },
      { kind: 'run', argv: ['sysrc', `${RC_NAME}_enable=YES`] },
      { kind: 'run', argv: ['service', RC_NAME, 'restart'] },
    ];
  },
  uninstallSteps(): PlanStep[] {
    return [
      { kind: 'run', argv: ['service', RC_NAME, 'onestop'], mayFail: true },
      { kind: 'run', argv: ['sysrc', '-x', `${RC_NAME}_enable`], mayFail: true },
      { kind: 'remove', path: RC_SCRIPT },
      { kind: 'remove', path: SYSLOG_CONF },
      { kind: 'remove', path: NEWSYSLOG_CONF },
      { kind: 'run', argv: ['service', 'syslogd', 'reload'], mayFail: true },
    ];
  },
  logLocation: () => `${LOG_FILE} (syslog tag ${SERVICE_NAME}, rotated by newsyslog)`,
};
