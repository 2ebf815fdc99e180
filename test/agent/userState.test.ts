// A non-root user without --state-dir (contract, "State directory"): a per-user state directory,
// or, when the system service's state exists, a plain "re-run with sudo" (exit 2). Runs the CLI as
// the unprivileged user `nobody`, which needs root to set up.
import { chownSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEnv, listStateFiles, runAgent, tempDir } from '../support/agent';
import { expectUserError, serverAccepts, useServer } from './cliHelpers';
import { anyNumber } from '../support/matchers';

const NOBODY = 65534;
const canSwitchUser = process.getuid?.() === 0;
const SYSTEM_STATE_DIR = '/var/lib/device-agent';
if (!canSwitchUser) console.warn('SKIPPED: the per-user state directory test runs the CLI as nobody, which needs root');

describe.skipIf(!canSwitchUser)('as a non-root user without --state-dir', () => {
  const running = useServer();

  function userHome(): string {
    const home = tempDir('device-agent-user-');
    chownSync(home, NOBODY, NOBODY);
    return home;
  }

  it.skipIf(existsSync(SYSTEM_STATE_DIR))('uses $XDG_STATE_HOME/device-agent, owner-only', async () => {
    const home = userHome();
    const device = await running.current.createDevice();
    const env = agentEnv({ HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_RUNTIME_DIR: home });
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-'], {
      input: device.enrollment_token,
      env,
      uid: NOBODY,
      gid: NOBODY,
    });
    expect(result.code, result.stderr).toBe(0);
    const dir = join(home, 'state', 'device-agent');
    expect(statSync(dir)).toMatchObject({ uid: NOBODY, mode: anyNumber() });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const key = listStateFiles(dir).find((file) => file.path === 'api-key')!;
    expect(key.mode).toBe(0o600);
    expect(await serverAccepts(running.current, key.content!.trim())).toBe(true);

    const status = await runAgent(['status', '--json'], { env, uid: NOBODY, gid: NOBODY });
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: true, state_dir: dir, keystore: 'file' });
    expect((await runAgent(['unenroll'], { env, uid: NOBODY, gid: NOBODY })).code).toBe(0);
  });

  it.skipIf(!existsSync(SYSTEM_STATE_DIR))('refuses with exit 2 and points to sudo when the service state exists', async () => {
    const home = userHome();
    const result = await runAgent(['status'], { env: agentEnv({ HOME: home, XDG_RUNTIME_DIR: home }), uid: NOBODY, gid: NOBODY });
    expectUserError(result, 2, /state is in \/var\/lib\/device-agent .*sudo/);
  });
});
