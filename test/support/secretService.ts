// A real, private Secret Service for the keyring tests: a D-Bus session bus of our own and
// gnome-keyring-daemon unlocked with a throwaway password, under a temporary HOME and
// XDG_RUNTIME_DIR (research/node-ecosystem.md §3.3). Nothing touches the machine's own keyrings.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './agent';
import type { Tool } from './systemTools';

/** What `startSecretService` runs: for `requireTools`. */
export const SECRET_SERVICE_TOOLS: readonly Tool[] = ['dbus-daemon', 'dbus-send', 'gnome-keyring-daemon', 'secret-tool'];

export interface SecretService {
  /** Environment for child processes that must see this Secret Service (and nothing else). */
  env: NodeJS.ProcessEnv;
  /** `secret-tool lookup`: the secret stored under these attributes, or null. */
  lookup(attributes: Record<string, string>): string | null;
  /** `secret-tool search --all`: how many items match these attributes. */
  count(attributes: Record<string, string>): number;
  /** Locks the login collection, as a screen lock would. */
  lock(): void;
  /** Unlocks it again (a replacement daemon, unlocked with the password: the test bus has no prompter). */
  unlock(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSecretService(password = 'device-agent-test-keyring'): Promise<SecretService> {
  const home = tempDir('device-agent-keyring-home-');
  const runtime = tempDir('device-agent-keyring-run-');
  chmodSync(runtime, 0o700);
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime, LANG: 'C' };
  const children: ChildProcess[] = [];

  const stop = async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGTERM');
      await Promise.race([once(child, 'exit'), sleep(2000).then(() => child.kill('SIGKILL'))]);
    }
  };

  try {
    const bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], { env: base, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(bus);
    const address = await firstLine(bus);
    const env: NodeJS.ProcessEnv = { ...base, DBUS_SESSION_BUS_ADDRESS: address };

    const tool = (args: string[], input?: string) => spawnSync('secret-tool', args, { env, input, encoding: 'utf8', timeout: 10_000 });
    const pairs = (attributes: Record<string, string>) => Object.entries(attributes).flat();
    let keyring: ChildProcess | undefined;
    const startKeyring = async () => {
      const previous = keyring;
      keyring = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets', ...(previous ? ['--replace'] : [])], {
        env,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      children.push(keyring);
      keyring.stdin!.end(password);
      if (previous && previous.exitCode === null && previous.signalCode === null) await once(previous, 'exit');
      await waitForSecretsName(env);
      // Ready when a round trip through the unlocked login collection works: the daemon may own its
      // bus name a moment before it has unlocked the collection.
      const deadline = Date.now() + 10_000;
      while (tool(['store', '--label=readiness probe', 'device-agent-test', 'probe'], 'x').status !== 0) {
        if (Date.now() > deadline) throw new Error('gnome-keyring-daemon: the login collection did not become writable within 10 s');
        await sleep(100);
      }
      tool(['clear', 'device-agent-test', 'probe']);
    };
    await startKeyring();

    return {
      env,
      lookup(attributes) {
        const result = tool(['lookup', ...pairs(attributes)]);
        return result.status === 0 ? result.stdout : null;
      },
      count(attributes) {
        // Each item starts with its object path in brackets on standard output.
        return (tool(['search', '--all', ...pairs(attributes)]).stdout.match(/^\[\//gm) ?? []).length;
      },
      lock() {
        const result = spawnSync(
          'dbus-send',
          [
            '--session',
            '--dest=org.freedesktop.secrets',
            '--type=method_call',
            '--print-reply',
            '/org/freedesktop/secrets',
            'org.freedesktop.Secret.Service.Lock',
            'array:objpath:/org/freedesktop/secrets/collection/login',
          ],
          { env, encoding: 'utf8', timeout: 10_000 },
        );
        if (result.status !== 0) throw new Error(`locking the keyring failed: ${result.stderr}`);
      },
      unlock: startKeyring,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A Secret Service for the suite it is called in: started before its tests, stopped after them. */
export function useSecretService(): { readonly current: SecretService } {
  const holder: { current?: SecretService } = {};
  beforeAll(async () => {
    holder.current = await startSecretService();
  });
  afterAll(async () => {
    await holder.current?.stop();
  });
  return holder as { readonly current: SecretService };
}

/**
 * A session bus with no services to activate: what a machine with D-Bus but without any Secret
 * Service provider offers. Returns the environment and a stop function. For a user's own bus as a
 * desktop session has it: `dir` (their runtime directory, which the caller made theirs), listened on
 * at `<dir>/bus`, the daemon run `as` that user; `alsoRoot` lets root in too (a test's recorder).
 */
export async function startBareSessionBus(
  options: { dir?: string; as?: { uid: number; gid: number }; alsoRoot?: boolean } = {},
): Promise<{ env: NodeJS.ProcessEnv; stop: () => Promise<void> }> {
  const dir = options.dir ?? tempDir('device-agent-bus-');
  if (options.dir === undefined) chmodSync(dir, 0o700);
  const config = join(dir, 'bus.conf');
  const listen = options.dir === undefined ? `unix:dir=${dir}` : `unix:path=${dir}/bus`;
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>${listen}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/>${options.alsoRoot ? '<allow user="root"/>' : ''}</policy>
</busconfig>
`,
  );
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: dir, XDG_RUNTIME_DIR: dir, LANG: 'C' };
  const bus = spawn('dbus-daemon', ['--config-file', config, '--nofork', '--print-address=1'], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
    ...(options.as ?? {}),
  });
  const address = await firstLine(bus);
  return {
    env: { ...env, DBUS_SESSION_BUS_ADDRESS: address },
    stop: async () => {
      if (bus.exitCode !== null || bus.signalCode !== null) return;
      bus.kill('SIGTERM');
      await once(bus, 'exit');
    },
  };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('dbus-daemon did not print its address')), 10_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const newline = text.indexOf('\n');
      if (newline !== -1) {
        clearTimeout(timer);
        resolve(text.slice(0, newline).trim());
      }
    });
    child.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}`)));
  });
}

/** Polls NameHasOwner (which, unlike a call to the name, never D-Bus-activates a second daemon). */
async function waitForSecretsName(env: NodeJS.ProcessEnv): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const result = spawnSync(
      'dbus-send',
      [
        '--session',
        '--dest=org.freedesktop.DBus',
        '--type=method_call',
        '--print-reply',
        '/org/freedesktop/DBus',
        'org.freedesktop.DBus.NameHasOwner',
        'string:org.freedesktop.secrets',
      ],
      { env, encoding: 'utf8' },
    );
    if (result.stdout.includes('boolean true')) return;
    await sleep(50);
  }
  throw new Error('gnome-keyring-daemon did not claim org.freedesktop.secrets within 10 s');
}
