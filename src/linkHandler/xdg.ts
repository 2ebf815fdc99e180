// Linux and FreeBSD desktops: a .desktop file declaring the x-scheme-handler/device-agent MIME type.
// update-desktop-database indexes it for every user; `xdg-mime default` also makes it the default
// handler of the desktop user who ran `sudo device-agent install` (defaults are per user). The agent
// starts without a terminal and opens one itself on a private copy of the link (xdgTerminal.ts), so
// that no long-lived process (the terminal) holds the link in its arguments.
import { posix } from 'node:path';
import { LINK_SCHEME } from '../protocol/schemas';
import type { PlanStep } from '../service/plan';
import { OPEN_LINK_COMMAND, type LinkHandlerModule, type LinkHandlerSpec } from './types';

export const DESKTOP_FILE_NAME = 'device-agent-link.desktop';
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
    // %u: the link, held only by the agent's own arguments, which it clears at start-up; the
    // terminal it opens shows the server and asks for confirmation (and for sudo).
    `Exec=${exec} --via-terminal %u`,
    'Terminal=false',
    'NoDisplay=true',
    `MimeType=${SCHEME_MIME_TYPE};`,
    'Categories=System;',
    '',
  ].join('\n');
}

export function xdgLinkHandler(applicationsDir: string): LinkHandlerModule {
  const desktopFile = posix.join(applicationsDir, DESKTOP_FILE_NAME);
  const reindex: PlanStep = { kind: 'run', argv: ['update-desktop-database', '-q', applicationsDir], mayFail: true };
  return {
    installSteps(spec) {
      const steps: PlanStep[] = [{ kind: 'write', path: desktopFile, content: desktopEntry(spec), mode: 0o644 }, reindex];
      if (spec.sudoUser) {
        steps.push({
          kind: 'run',
          argv: ['sudo', '-u', spec.sudoUser, '-H', 'xdg-mime', 'default', DESKTOP_FILE_NAME, SCHEME_MIME_TYPE],
          mayFail: true,
        });
      }
      return steps;
    },
    uninstallSteps: () => [{ kind: 'remove', path: desktopFile }, reindex],
  };
}
