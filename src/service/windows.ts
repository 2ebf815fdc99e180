// Windows: a real service in the Service Control Manager. A Node executable cannot answer the SCM
// protocol itself (it would fail with error 1053), so a service host does: WinSW, shipped beside the
// agent as device-agent-service.exe and configured by device-agent-service.xml next to it. WinSW
// starts `device-agent.exe run`, sends it Ctrl+C on stop, and writes its output to size-rotated
// log files. The SCM restarts the service when it fails (recovery actions set below).
import { win32 } from 'node:path';
import { commandLine, type PlanStep } from './plan';
import { SERVICE_DESCRIPTION, SERVICE_NAME, type ServiceModule, type ServiceSpec } from './types';
import { serviceLogDir } from '../agent/state';

export const SERVICE_HOST = `${SERVICE_NAME}-service.exe`;
export const SERVICE_HOST_CONFIG = `${SERVICE_NAME}-service.xml`;
export const DISPLAY_NAME = 'Device Agent';
/** Well-known SIDs (names are localized; SIDs are not). */
const SYSTEM_SID = '*S-1-5-18';
const ADMINISTRATORS_SID = '*S-1-5-32-544';
/** Restart after 10 s, 30 s, then every 60 s; forget failures after a day without one. */
export const RECOVERY = { resetSeconds: 86_400, delaysMs: [10_000, 30_000, 60_000] } as const;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The WinSW configuration (valid for WinSW 1.17 and later). */
export function winswConfig(spec: ServiceSpec): string {
  const [executable, ...programArgs] = spec.program;
  const args = commandLine([...programArgs, 'run', '--state-dir', spec.stateDir], 'windows');
  return [
    '<service>',
    `  <id>${SERVICE_NAME}</id>`,
    `  <name>${DISPLAY_NAME}</name>`,
    `  <description>${escapeXml(SERVICE_DESCRIPTION)}</description>`,
    `  <executable>${escapeXml(executable ?? '')}</executable>`,
    `  <arguments>${escapeXml(args)}</arguments>`,
    '  <startmode>Automatic</startmode>',
    // The agent stops within 5 s of Ctrl+C; WinSW kills it after this.
    '  <stoptimeout>15 sec</stoptimeout>',
    ...RECOVERY.delaysMs.map((ms) => `  <onfailure action="restart" delay="${ms / 1000} sec"/>`),
    '  <resetfailure>1 day</resetfailure>',
    `  <logpath>${escapeXml(serviceLogDir(spec.stateDir, win32))}</logpath>`,
    '  <log mode="roll-by-size">',
    '    <sizeThreshold>10240</sizeThreshold>',
    '    <keepFiles>5</keepFiles>',
    '  </log>',
    '</service>',
    '',
  ].join('\r\n');
}

/** `sc.exe failure` arguments for the recovery actions. */
function recoveryArgs(): string[] {
  const actions = RECOVERY.delaysMs.map((ms) => `restart/${ms}`).join('/');
  return ['failure', SERVICE_NAME, 'reset=', String(RECOVERY.resetSeconds), 'actions=', actions];
}

export const windowsService: ServiceModule = {
  platform: 'WINDOWS',
  style: 'windows',
  programLayout(env) {
    const dir = win32.join(env.ProgramFiles ?? env.PROGRAMFILES ?? 'C:\\Program Files', SERVICE_NAME);
    return { dir, executable: win32.join(dir, `${SERVICE_NAME}.exe`), companions: ['keyring.node', SERVICE_HOST] };
  },
  // Only SYSTEM and Administrators, nothing inherited from %ProgramData% (where Users may read).
  secureStateDir: (stateDir) => [
    {
      kind: 'run',
      argv: [
        'icacls.exe',
        stateDir,
        '/inheritance:r',
        '/grant:r',
        `${SYSTEM_SID}:(OI)(CI)F`,
        `${ADMINISTRATORS_SID}:(OI)(CI)F`,
        '/T',
        '/Q',
      ],
    },
  ],
  // A running executable cannot be replaced on Windows: stop the service before the files change.
  beforeProgramCopy: () => [{ kind: 'run', argv: ['net.exe', 'stop', SERVICE_NAME], mayFail: true }],
  installSteps(spec: ServiceSpec): PlanStep[] {
    const host = win32.join(spec.programDir, SERVICE_HOST);
    const serviceSettings = ['binPath=', `"${host}"`, 'start=', 'auto', 'DisplayName=', DISPLAY_NAME];
    return [
      { kind: 'write', path: win32.join(spec.programDir, SERVICE_HOST_CONFIG), content: winswConfig(spec), mode: 0o644 },
      // create fails when the service exists (a re-install); config then brings it up to date.
      { kind: 'run', argv: ['sc.exe', 'create', SERVICE_NAME, ...serviceSettings], mayFail: true },
      { kind: 'run', argv: ['sc.exe', 'config', SERVICE_NAME, ...serviceSettings] },
      { kind: 'run', argv: ['sc.exe', 'description', SERVICE_NAME, SERVICE_DESCRIPTION] },
      { kind: 'run', argv: ['sc.exe', ...recoveryArgs()] },
      // Recovery also when the agent exits with an error, not only when the host crashes.
      { kind: 'run', argv: ['sc.exe', 'failureflag', SERVICE_NAME, '1'] },
      { kind: 'run', argv: ['net.exe', 'start', SERVICE_NAME] },
    ];
  },
  uninstallSteps(spec: ServiceSpec): PlanStep[] {
    return [
      { kind: 'run', argv: ['net.exe', 'stop', SERVICE_NAME], mayFail: true },
      { kind: 'run', argv: ['sc.exe', 'delete', SERVICE_NAME], mayFail: true },
      { kind: 'remove', path: win32.join(spec.programDir, SERVICE_HOST_CONFIG) },
    ];
  },
  logLocation: (spec) => `${serviceLogDir(spec.stateDir, win32)} (rotated at 10 MiB, 5 files kept)`,
};
