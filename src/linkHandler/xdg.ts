// Linux and FreeBSD desktops: a .desktop file declaring the x-scheme-handler/device-agent MIME type,
// and the D-Bus service file that makes it D-Bus activatable. update-desktop-database indexes it for
// every user; `xdg-mime default` also makes it the default handler of the desktop user who ran
// `sudo device-agent install` (defaults are per user). A launcher that supports DBusActivatable
// (GLib's, so GNOME, Firefox, `gio open`; KDE's) asks the session bus to start the agent and hands it
// the link over D-Bus (dbusApplication.ts): the link is on no command line. Others run Exec= with the
// link as an argument, which the agent refuses unless the session sets DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1
// (docs/agent.md, "Secrets and the process list"). The agent then opens a terminal on a private copy
// of the link (xdgTerminal.ts).
import { posix } from 'node:path';
import { LINK_SCHEME } from '../protocol/schemas';
import { quotePosix, type PlanStep } from '../service/plan';
import { DBUS_SERVICE_FLAG, OPEN_LINK_COMMAND, XDG_APP_ID, type LinkHandlerModule, type LinkHandlerSpec } from './types';

/** D-Bus activation finds the application by its .desktop file's name: the application id. */
export const DESKTOP_FILE_NAME = `${XDG_APP_ID}.desktop`;
const DBUS_SERVICE_FILE_NAME = `${XDG_APP_ID}.service`;
/** The name of the .desktop file before it was D-Bus activatable: removed on install. */
const OLD_DESKTOP_FILE_NAME = 'device-agent-link.desktop';
const SCHEME_MIME_TYPE = `x-scheme-handler/${LINK_SCHEME}`;

const RESERVED = /[\s"'\\><~|&;$*?#()`]/;

/** One Exec= argument (Desktop Entry Specification: quoting, then the string-value escapes, then %%). */
function execArgument(arg: string): string {
  const quoted = RESERVED.test(arg) || arg === '' ? `"${arg.replace(/(["`$\\])/g, '\\$1')}"` : arg;
  return quoted.replace(/\\/g, '\\\\').replace(/%/g, '%%');
}

export function desktopEntry(spec: LinkHandlerSpec): string {
  const exec = [...spec.program, OPEN_LINK_COMMAND].map(execArgument).join(' ');
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Device Agent enrollment',
    'Comment=Enroll this device with the server named in a device-agent:// link, after asking you',
    // Launchers that support it call Open on the D-Bus service instead of running Exec.
    'DBusActivatable=true',
    // The fallback of the other launchers: the agent refuses the link there unless the session opts
    // in with DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1. %u stays for those: xdg-open's generic mode appends
    // the link to a command without a field code anyway, so dropping it would hide nothing.
    `Exec=${exec} --via-terminal %u`,
    'Terminal=false',
    'NoDisplay=true',
    `MimeType=${SCHEME_MIME_TYPE};`,
    'Categories=System;',
    '',
  ].join('\n');
}

/** The "My device posture" launcher's file name (in applications/, beside the link handler's). */
export const MY_DEVICE_DESKTOP_FILE_NAME = 'org.device_agent.MyDevice.desktop';

/** The launcher that opens this device's page for the logged-in user (`device-agent my-device`). */
export function myDeviceDesktopEntry(spec: Pick<LinkHandlerSpec, 'program'>): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=My device posture',
    "Comment=See this device's security checks and how to fix what fails",
    `Exec=${[...spec.program, 'my-device'].map(execArgument).join(' ')}`,
    'Icon=security-medium',
    'Terminal=false',
    'Categories=System;Security;',
    '',
  ].join('\n');
}

/** The session bus's service file: it starts the agent, which claims XDG_APP_ID, when a launcher asks for it. */
export function dbusServiceFile(spec: LinkHandlerSpec): string {
  // dbus-daemon splits Exec= as a POSIX shell would, quotes included, without expansions.
  const exec = [...spec.program, OPEN_LINK_COMMAND, DBUS_SERVICE_FLAG].map(quotePosix).join(' ');
  return ['[D-BUS Service]', `Name=${XDG_APP_ID}`, `Exec=${exec}`, ''].join('\n');
}

/** The link handler's files under a `share` directory (/usr/share, /usr/local/share). */
export function xdgLinkHandlerFiles(shareDir: string): { desktopFile: string; serviceFile: string } {
  return {
    desktopFile: posix.join(shareDir, 'applications', DESKTOP_FILE_NAME),
    serviceFile: posix.join(shareDir, 'dbus-1', 'services', DBUS_SERVICE_FILE_NAME),
  };
}

export function xdgLinkHandler(shareDir: string): LinkHandlerModule {
  const applicationsDir = posix.join(shareDir, 'applications');
  const { desktopFile, serviceFile } = xdgLinkHandlerFiles(shareDir);
  const oldDesktopFile: PlanStep = { kind: 'remove', path: posix.join(applicationsDir, OLD_DESKTOP_FILE_NAME) };
  const reindex: PlanStep = { kind: 'run', argv: ['update-desktop-database', '-q', applicationsDir], mayFail: true };
  return {
    installSteps(spec) {
      const steps: PlanStep[] = [
        oldDesktopFile,
        { kind: 'write', path: serviceFile, content: dbusServiceFile(spec), mode: 0o644 },
        { kind: 'write', path: desktopFile, content: desktopEntry(spec), mode: 0o644 },
        reindex,
      ];
      if (spec.sudoUser) {
        steps.push({
          kind: 'run',
          argv: ['sudo', '-u', spec.sudoUser, '-H', 'xdg-mime', 'default', DESKTOP_FILE_NAME, SCHEME_MIME_TYPE],
          mayFail: true,
        });
      }
      return steps;
    },
    uninstallSteps: () => [{ kind: 'remove', path: desktopFile }, { kind: 'remove', path: serviceFile }, oldDesktopFile, reindex],
  };
}
