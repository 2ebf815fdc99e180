// What each platform's link-handler module provides: the files and commands that register (and
// unregister) the agent for device-agent:// links. Pure, like the service modules.
import type { PlanStep } from '../service/plan';

export interface LinkHandlerSpec {
  /** The installed agent, before its own arguments (an executable, or node + script). */
  readonly program: readonly string[];
  /** The directory the agent is installed in. */
  readonly programDir: string;
  /** The desktop user who ran `sudo device-agent install`, when there is one. */
  readonly sudoUser?: string;
}

export interface LinkHandlerModule {
  installSteps(spec: LinkHandlerSpec): PlanStep[];
  uninstallSteps(spec: LinkHandlerSpec): PlanStep[];
}

/**
 * The link a notification's "Open My device" opens where the notification can only open a link
 * (Windows' toast): `open-link` runs `my-device` for it. It carries no secret, so nothing is asked.
 */
export const MY_DEVICE_LINK = 'device-agent://my-device';

/** The hidden command a link opens: it shows the server and asks before enrolling. */
export const OPEN_LINK_COMMAND = 'open-link';

/**
 * The desktop link handler's application id (Linux, FreeBSD): the D-Bus name it claims, the name of
 * its .desktop file and of its D-Bus service file. Reverse DNS of device-agent.org, with the hyphen
 * as an underscore as D-Bus names require.
 */
export const XDG_APP_ID = 'org.device_agent.LinkHandler';

/** The open-link flag the D-Bus service file starts the agent with: claim XDG_APP_ID, take links over D-Bus. */
export const DBUS_SERVICE_FLAG = '--dbus-service';
