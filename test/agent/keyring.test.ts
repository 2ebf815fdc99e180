// The keyring key store against a real Secret Service (gnome-keyring on a private D-Bus session),
// driven through the built CLI: the key lives in the secret store and in no file, each state
// directory has its own entry, unenroll removes it, `auto` chooses by reachability, and a locked
// store is reported as locked (exit 1), never as "not enrolled".
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnv, listStateFiles, runAgent, tempDir } from '../support/agent';
import { SECRET_SERVICE_TOOLS, startBareSessionBus, startSecretService, type SecretService } from '../support/secretService';
import { requireTools } from '../support/requireTools';
import { expectNoSecrets, expectUserError, serverAccepts as accepts, stateDir, useServer } from './cliHelpers';
import type { EnrollmentRecord } from '../../src/agent/state';
import { readJson } from '../support/json';

const running = useServer();
const serverAccepts = (apiKey: string) => accepts(running.current, apiKey);

const keyringStore = requireTools(SECRET_SERVICE_TOOLS, 'keyring key store (real Secret Service)');
const bareBus = requireTools(['dbus-daemon'], 'auto falls back to the file store on a session bus without a Secret Service provider');

/** The keyring entry recorded for a state directory. */
function entryOf(dir: string): { service: string; username: string } {
  const record = readJson<EnrollmentRecord>(join(dir, 'enrollment.json'));
  expect(record.keystore).toBe('keyring');
  return { service: String(record.keyring_entry?.service), username: String(record.keyring_entry?.account) };
}

/** Every file of the state directory, none of which may hold `secret`. */
function expectNotInAnyFile(dir: string, secret: string) {
  for (const file of listStateFiles(dir)) {
    expect(file.isDirectory ? file.mode : file.mode, file.path).toBe(file.isDirectory ? 0o700 : 0o600);
    if (file.content !== undefined) expect(file.content, file.path).not.toContain(secret);
  }
}

describe.skipIf(keyringStore.skip)(keyringStore.title, () => {
  let secrets: SecretService;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    secrets = await startSecretService();
    env = agentEnv(secrets.env);
  });
  afterAll(async () => {
    await secrets?.stop();
  });

  async function enroll(dir: string, extra: string[] = []) {
    const device = await running.current.createDevice();
    const result = await runAgent(
      ['enroll', '--server', running.current.url, '--token', '-', '--state-dir', dir, '--log-level', 'trace', ...extra],
      {
        input: device.enrollment_token,
        env,
      },
    );
    return { device, result };
  }

  it('auto puts the key in the secret store and in no file; status shows it; unenroll removes it', async () => {
    const dir = stateDir();
    const { device, result } = await enroll(dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('The API key is in the OS secret store.');
    const entry = entryOf(dir);
    const apiKey = secrets.lookup(entry);
    expect(apiKey).toMatch(/^[0-9a-f]{96}$/);
    expect(await serverAccepts(apiKey!)).toBe(true);
    expectNoSecrets(result, device.enrollment_token, apiKey!);
    expect(listStateFiles(dir).map((f) => f.path)).toEqual(['enrollment.json']);
    expectNotInAnyFile(dir, apiKey!);

    const status = await runAgent(['status', '--json', '--state-dir', dir, '--log-level', 'trace'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: true, keystore: 'keyring', key_available: true });
    expectNoSecrets(status, apiKey!);

    const unenrolled = await runAgent(['unenroll', '--state-dir', dir, '--log-level', 'trace'], { env });
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(unenrolled.stdout).toContain('The server confirmed');
    expectNoSecrets(unenrolled, apiKey!);
    expect(secrets.lookup(entry)).toBeNull();
    expect(secrets.count(entry)).toBe(0);
    expect(listStateFiles(dir)).toEqual([]);
    expect(await serverAccepts(apiKey!)).toBe(false);
  });

  it('before any enrollment, status names the secret store as the one to use and writes no entry', async () => {
    const dir = stateDir();
    const status = await runAgent(['status', '--json', '--state-dir', dir], { env });
    expect(status.code, status.stderr).toBe(5);
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: false, keystore: 'keyring' });
    expect(secrets.lookup({ service: 'device-agent', username: 'probe' })).toBeNull();
  });

  it('gives each state directory its own entry', async () => {
    const [first, second] = [stateDir(), stateDir()];
    expect((await enroll(first, ['--keystore', 'keyring'])).result.code).toBe(0);
    expect((await enroll(second, ['--keystore', 'keyring'])).result.code).toBe(0);
    const [a, b] = [entryOf(first), entryOf(second)];
    expect(a.username).not.toBe(b.username);
    const [keyA, keyB] = [secrets.lookup(a), secrets.lookup(b)];
    expect(keyA).toMatch(/^[0-9a-f]{96}$/);
    expect(keyB).toMatch(/^[0-9a-f]{96}$/);
    expect(keyA).not.toBe(keyB);
    // Unenrolling one leaves the other alone.
    expect((await runAgent(['unenroll', '--state-dir', first], { env })).code).toBe(0);
    expect(secrets.lookup(a)).toBeNull();
    expect(secrets.lookup(b)).toBe(keyB);
    expect((await runAgent(['unenroll', '--state-dir', second], { env })).code).toBe(0);
  });

  it('an unreadable enrollment record: unenroll still removes the key from the secret store', async () => {
    const dir = stateDir();
    const { result } = await enroll(dir, ['--keystore', 'keyring']);
    expect(result.code, result.stderr).toBe(0);
    const entry = entryOf(dir);
    expect(secrets.count(entry)).toBe(1);
    writeFileSync(join(dir, 'enrollment.json'), '{not json'); // the record no longer says where the key is
    const unenrolled = await runAgent(['unenroll', '--state-dir', dir], { env });
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(unenrolled.stdout).toContain('The server did not confirm (the enrollment record was unreadable)');
    expect(secrets.count(entry)).toBe(0);
    expect(listStateFiles(dir)).toEqual([]);
  });

  it('a locked store is reported as such (exit 1), not as "not enrolled", and nothing is lost', async () => {
    const dir = stateDir();
    const enrolled = (await enroll(dir)).result;
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const entry = entryOf(dir);
    secrets.lock();
    try {
      const status = await runAgent(['status', '--json', '--state-dir', dir], { env });
      expect(status.code, status.stderr).toBe(1);
      expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: true, keystore: 'keyring', key_available: false });
      expect(status.stderr).toMatch(/the OS secret store is unavailable: .*it is locked: unlock it/i);

      const unenroll = await runAgent(['unenroll', '--state-dir', dir], { env });
      expectUserError(unenroll, 1, /the OS secret store is unavailable: .*it is locked: unlock it/i);
      expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).state).toBe('enrolled');

      // Enrolling another directory now would spend a token on a key it cannot store: refused first.
      const other = stateDir();
      const { device, result } = await enroll(other);
      expectUserError(result, 1, /the OS secret store is unavailable: .*it is locked: unlock it/i);
      expect(listStateFiles(other)).toEqual([]);
      const unspent = await runAgent(
        ['enroll', '--server', running.current.url, '--token', '-', '--state-dir', stateDir(), '--keystore', 'file'],
        {
          input: device.enrollment_token,
          env,
        },
      );
      expect(unspent.code, unspent.stderr).toBe(0); // the token was not spent
    } finally {
      await secrets.unlock();
    }
    expect(secrets.lookup(entry)).toMatch(/^[0-9a-f]{96}$/);
    const unenrolled = await runAgent(['unenroll', '--state-dir', dir], { env });
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
  });
});

describe('key store choice without a Secret Service', () => {
  // No session bus at all: what a headless server or a root service sees.
  const noBus = () => agentEnv({ XDG_RUNTIME_DIR: tempDir('device-agent-nobus-') });

  it('auto falls back to the file store and says why', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--state-dir', dir], {
      input: device.enrollment_token,
      env: noBus(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('No OS secret store was reachable: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set).');
    expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).keystore).toBe('file');
    const status = await runAgent(['status', '--json', '--state-dir', dir], { env: noBus() });
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: true, keystore: 'file', key_available: true });
  });

  it('before any enrollment, status names the file store', async () => {
    const status = await runAgent(['status', '--json', '--state-dir', stateDir()], { env: noBus() });
    expect(status.code, status.stderr).toBe(5);
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: false, keystore: 'file' });
  });

  it.skipIf(bareBus.skip)(bareBus.title, async () => {
    const bus = await startBareSessionBus();
    try {
      const device = await running.current.createDevice();
      const dir = stateDir();
      const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--state-dir', dir], {
        input: device.enrollment_token,
        env: agentEnv(bus.env),
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        'No OS secret store was reachable: no Secret Service provider (such as gnome-keyring) on the session bus.',
      );
      expect(
        listStateFiles(dir)
          .map((f) => f.path)
          .sort(),
      ).toEqual(['api-key', 'enrollment.json']);
    } finally {
      await bus.stop();
    }
  });

  it('--keystore keyring refuses with exit 1 before spending the token', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(
      ['enroll', '--server', running.current.url, '--token', '-', '--state-dir', dir, '--keystore', 'keyring'],
      {
        input: device.enrollment_token,
        env: noBus(),
      },
    );
    expectUserError(result, 1, /the OS secret store is unavailable: no D-Bus session bus/);
    expect(listStateFiles(dir)).toEqual([]);
    const retry = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--state-dir', dir, '--keystore', 'file'], {
      input: device.enrollment_token,
      env: noBus(),
    });
    expect(retry.code, retry.stderr).toBe(0);
  });
});
