// Linux and FreeBSD desktops: the link handler as a D-Bus activatable application (Desktop Entry
// Specification, "D-Bus Activation"). A launcher that honours DBusActivatable=true asks the session
// bus for XDG_APP_ID; the bus starts `open-link --dbus-service` from the service file (xdg.ts), with
// no link on any command line, and the launcher calls org.freedesktop.Application.Open(uris,
// platform_data) on it. The link arrives in that message and goes on as from the .desktop Exec
// fallback: to a private file and a terminal (xdgTerminal.ts). Only the user's own processes can
// reach their session bus.
import { InvalidInputError, firstLine } from '../agent/errors';
import { CommandFailure, EXIT, redactCredentials } from '../cli/exitCodes';
import { BusConnection, type Message, type Variant, type WireValue } from './dbusWire';
import { XDG_APP_ID } from './types';

/** The application's object: its id with dots as slashes (the specification's rule). */
export const OBJECT_PATH = `/${XDG_APP_ID.replaceAll('.', '/')}`;
const APPLICATION = 'org.freedesktop.Application';
const BUS = ['org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus'] as const;
const DO_NOT_QUEUE = 0x4;
const PRIMARY_OWNER = 1;

/** The bus's own activation timeout: a handler nobody calls by then was started for nothing. */
const FIRST_CALL_MS = 25_000;
/** After the last call is answered: a launcher opening several links one by one finds us still here. */
const IDLE_MS = 2_000;

/** Hands one link on; `env` is the environment for what it starts (the launcher's activation token). */
export type LinkOpener = (link: string, env: NodeJS.ProcessEnv) => Promise<unknown>;

const INTROSPECTION = `<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<node>
  <interface name="${APPLICATION}">
    <method name="Activate"><arg type="a{sv}" name="platform_data" direction="in"/></method>
    <method name="Open"><arg type="as" name="uris" direction="in"/><arg type="a{sv}" name="platform_data" direction="in"/></method>
    <method name="ActivateAction"><arg type="s" name="action_name" direction="in"/><arg type="av" name="parameter" direction="in"/><arg type="a{sv}" name="platform_data" direction="in"/></method>
  </interface>
  <interface name="org.freedesktop.DBus.Introspectable">
    <method name="Introspect"><arg type="s" name="xml_data" direction="out"/></method>
  </interface>
  <interface name="org.freedesktop.DBus.Peer">
    <method name="Ping"/>
  </interface>
</node>
`;

/** The platform_data keys a launcher passes for focus and startup notification, as the terminal's environment. */
const PLATFORM_ENV: Record<string, string> = { 'activation-token': 'XDG_ACTIVATION_TOKEN', 'desktop-startup-id': 'DESKTOP_STARTUP_ID' };

function launchEnvironment(platformData: WireValue, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const launch = { ...env };
  for (const [key, variant] of platformData as Array<[string, Variant]>) {
    const name = PLATFORM_ENV[key];
    if (name !== undefined && variant.signature === 's') launch[name] = variant.value as string;
  }
  return launch;
}

type Answer = (bus: BusConnection, call: Message, open: LinkOpener, env: NodeJS.ProcessEnv) => Promise<void> | void;

/** The methods of the object, by member: interface, signature of the arguments, answer. */
const METHODS: Record<string, readonly [iface: string, signature: string, answer: Answer]> = {
  Open: [
    APPLICATION,
    'asa{sv}',
    async (bus, call, open, env) => {
      const [uris, platformData] = call.body as [string[], WireValue];
      for (const uri of uris) await open(uri, launchEnvironment(platformData, env));
      bus.reply(call);
    },
  ],
  // Nothing to show without a link: the handler has no window (NoDisplay=true).
  Activate: [APPLICATION, 'a{sv}', (bus, call) => bus.reply(call)],
  ActivateAction: [
    APPLICATION,
    'sava{sv}',
    (bus, call) => bus.replyError(call, 'org.freedesktop.DBus.Error.InvalidArgs', `no action ${call.body[0] as string}`),
  ],
  Introspect: ['org.freedesktop.DBus.Introspectable', '', (bus, call) => bus.reply(call, 's', [INTROSPECTION])],
  Ping: ['org.freedesktop.DBus.Peer', '', (bus, call) => bus.reply(call)],
};

async function answer(bus: BusConnection, call: Message, open: LinkOpener, env: NodeJS.ProcessEnv): Promise<void> {
  const method = call.member !== undefined && Object.hasOwn(METHODS, call.member) ? METHODS[call.member] : undefined;
  if (call.path !== OBJECT_PATH) return bus.replyError(call, 'org.freedesktop.DBus.Error.UnknownObject', `no object ${call.path}`);
  if (!method || (call.interface !== undefined && call.interface !== method[0])) {
    return bus.replyError(call, 'org.freedesktop.DBus.Error.UnknownMethod', `no method ${call.interface ?? ''}.${call.member}`);
  }
  if (call.signature !== method[1]) {
    return bus.replyError(call, 'org.freedesktop.DBus.Error.InvalidArgs', `${call.member} takes (${method[1]}), not (${call.signature})`);
  }
  try {
    await method[2](bus, call, open, env);
  } catch (err) {
    const message = redactCredentials(firstLine(err));
    process.stderr.write(`device-agent: ${message}\n`); // the bus's log (the journal under systemd)
    bus.replyError(call, 'org.freedesktop.DBus.Error.Failed', message);
  }
}

/** The session bus: the one that started us (DBUS_STARTER_ADDRESS), else the session's. */
function sessionBusAddress(env: NodeJS.ProcessEnv): string {
  const address =
    env.DBUS_STARTER_ADDRESS ?? env.DBUS_SESSION_BUS_ADDRESS ?? (env.XDG_RUNTIME_DIR && `unix:path=${env.XDG_RUNTIME_DIR}/bus`);
  if (!address) throw new InvalidInputError('no session bus: DBUS_SESSION_BUS_ADDRESS is not set');
  return address;
}

/**
 * Claims XDG_APP_ID on the session bus and answers calls until idle; each link Open brings goes to
 * `open`. Resolves with the exit code.
 */
export async function serveLinkHandler(env: NodeJS.ProcessEnv, open: LinkOpener): Promise<number> {
  const address = sessionBusAddress(env);
  const bus = await BusConnection.open(address).catch((err: unknown) => {
    throw new CommandFailure(`cannot reach the session bus at ${address}: ${firstLine(err)}`, EXIT.unreachable);
  });
  const [owner] = await bus.call(...BUS, 'RequestName', 'su', [XDG_APP_ID, DO_NOT_QUEUE]);
  if (owner !== PRIMARY_OWNER) {
    await bus.close();
    throw new InvalidInputError(`${XDG_APP_ID} already runs on this session bus: it takes the links`);
  }
  return new Promise((resolve) => {
    let inFlight = 0;
    let work = Promise.resolve();
    let timer = setTimeout(() => void bus.close(), FIRST_CALL_MS);
    bus.handleCalls((call) => {
      clearTimeout(timer);
      inFlight += 1;
      // One call at a time, in the order they came: each link's terminal opens in turn.
      work = work
        .then(() => answer(bus, call, open, env))
        .finally(() => {
          inFlight -= 1;
          if (inFlight === 0) timer = setTimeout(() => void bus.close(), IDLE_MS);
        });
    });
    void bus.ended.then((err) => {
      clearTimeout(timer);
      if (err) process.stderr.write(`device-agent: the session bus connection failed: ${firstLine(err)}\n`);
      resolve(err ? 1 : 0);
    });
  });
}
