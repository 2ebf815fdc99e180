// The state directory is trusted only when it is ours: real files owned by another uid (65534, as
// root), group/other-writable modes and planted symbolic links, driven through the real CLI against
// the real server. Each refusal is exit 2 with a clear message and changes nothing: no chmod, no
// file, no request (the token stays unspent).
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgent, startDaemon, stopDaemon, tempDir, until } from '../support/agent';
import { common, enrolledDir, expectNoSecrets, expectUserError, stateDir, useServer } from './cliHelpers';
import { anyNumber } from '../support/matchers';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('stateTrust.test.ts: skipped, creating files owned by another user needs root');

const running = useServer();

/** Enrolling `dir` is refused with exit 2, and the token is still valid afterwards (nothing was sent). */
async function expectEnrollRefused(dir: string, message: RegExp): Promise<void> {
  const device = await running.current.createDevice();
  const refused = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
    input: device.enrollment_token,
  });
  expectUserError(refused, 2, message);
  expect(refused.stderr).toContain('Nothing was changed');
  expectNoSecrets(refused, device.enrollment_token);
  const elsewhere = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(stateDir())], {
    input: device.enrollment_token,
  });
  expect(elsewhere.code, elsewhere.stderr).toBe(0);
}

describe.skipIf(!isRoot)('the state directory is trusted only when it is ours', () => {
  it('refuses a state directory owned by another user, and leaves it as it was', async () => {
    const dir = stateDir();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    await expectEnrollRefused(dir, new RegExp(`${dir.replace(/[/.]/g, '\\$&')} is owned by uid ${NOBODY}, not by this user \\(uid 0\\)`));
    expect(statSync(dir)).toMatchObject({ uid: NOBODY, mode: anyNumber() });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a directory writable by group or others instead of chmodding it', async () => {
    for (const [mode, who] of [
      [0o777, 'group and others'],
      [0o730, 'group'],
      [0o703, 'others'],
    ] as const) {
      const dir = stateDir();
      mkdirSync(dir);
      chmodSync(dir, mode);
      await expectEnrollRefused(dir, new RegExp(`is writable by ${who} \\(mode 0${mode.toString(8)}\\)`));
      expect(statSync(dir).mode & 0o777).toBe(mode);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it('refuses a state directory that is a symbolic link, without changing the mode of its target', async () => {
    const target = join(tempDir(), 'elsewhere');
    mkdirSync(target);
    chmodSync(target, 0o755);
    const dir = stateDir();
    symlinkSync(target, dir);
    await expectEnrollRefused(dir, /is a symbolic link/);
    expect(statSync(target).mode & 0o777).toBe(0o755);
    expect(readdirSync(target)).toEqual([]);
  });

  it.each<[string, (dir: string) => void, RegExp]>([
    [
      'record owned by another user',
      (dir) => chownSync(join(dir, 'enrollment.json'), NOBODY, NOBODY),
      /enrollment\.json is owned by uid 65534/,
    ],
    ['key file writable by others', (dir) => chmodSync(join(dir, 'api-key'), 0o606), /api-key is writable by others/],
    [
      'queue directory writable by all',
      (dir) => {
        mkdirSync(join(dir, 'queue'));
        chmodSync(join(dir, 'queue'), 0o777);
      },
      /queue is writable by group and others/,
    ],
    ['planted symbolic link', (dir) => symlinkSync('/etc/hostname', join(dir, 'status.json')), /status\.json is a symbolic link/],
    // A lock is a link naming a pid (lock.ts); one naming anything else is planted.
    [
      'lock link that names a file, not a pid',
      (dir) => symlinkSync('/etc/hostname', join(dir, 'daemon.lock')),
      /daemon\.lock is a symbolic link/,
    ],
    [
      'pid lock link owned by another user',
      (dir) => {
        symlinkSync('1', join(dir, 'daemon.lock'));
        lchownSync(join(dir, 'daemon.lock'), NOBODY, NOBODY);
      },
      /daemon\.lock is owned by uid 65534/,
    ],
  ])(
    'refuses an enrolled directory with a %s, in every command, changing nothing',
    async (_label, plant, message) => {
      const { dir, device } = await enrolledDir(running.current);
      plant(dir);
      const entries = () => readdirSync(dir).map((name) => [name, lstatSync(join(dir, name)).mode, lstatSync(join(dir, name)).uid]);
      const before = entries();
      for (const args of [['status'], ['unenroll'], ['run', '--once']]) {
        const result = await runAgent([...args, ...common(dir)]);
        expectUserError(result, 2, message);
      }
      // Nothing changed: same entries, modes and owners; the key was not revoked at the server.
      expect(entries()).toEqual(before);
      expect((await running.current.showDevice(device.device_id)).state).not.toBe('REVOKED');
    },
    90_000,
  );

  it("trusts the running daemon's own lock (a link naming its pid): status reads the state meanwhile", async () => {
    const { dir } = await enrolledDir(running.current);
    const daemon = startDaemon(dir);
    try {
      await until(
        () => lstatSync(join(dir, 'daemon.lock'), { throwIfNoEntry: false })?.isSymbolicLink() === true,
        Boolean,
        60_000,
        'the daemon lock',
      );
      const status = await runAgent(['status', ...common(dir)]);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(String(daemon.pid));
    } finally {
      await stopDaemon(daemon);
    }
  });

  it('still narrows a directory of ours that others may only read', async () => {
    const dir = stateDir();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const device = await running.current.createDevice();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
