// `auto` in the system service's state directory picks the store the service can read. The real
// case: root, with a desktop Secret Service reachable (as under `sudo` from a desktop), enrolls
// into the default system state directory; the key must land where the service looks, not in the
// administrator's keyring. /var/lib is a private tmpfs in a mount namespace, so the host's real
// system state directory is never touched.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { keystoreForStateDir } from '../../src/platform/serviceKeystore';
import { AGENT_BIN, agentEnv, runAgent, tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { SECRET_SERVICE_TOOLS, useSecretService } from '../support/secretService';
import { useServer } from './cliHelpers';

describe('keystoreForStateDir', () => {
  const system = '/var/lib/device-agent';
  it('turns auto into the service-readable store for the system state directory only', () => {
    expect(keystoreForStateDir('auto', system, system, 'LINUX')).toBe('file');
    expect(keystoreForStateDir('auto', `${system}/`, system, 'FREEBSD')).toBe('file');
    expect(keystoreForStateDir('auto', 'C:\\ProgramData\\device-agent', 'C:\\ProgramData\\device-agent', 'WINDOWS')).toBe('file');
    // macOS: root's auto reaches the System keychain, which the LaunchDaemon reads.
    expect(keystoreForStateDir('auto', system, system, 'DARWIN')).toBe('auto');
    expect(keystoreForStateDir('auto', '/home/someone/.local/state/device-agent', system, 'LINUX')).toBe('auto');
  });
  it('never overrides an explicit keyring or file choice', () => {
    expect(keystoreForStateDir('keyring', system, system, 'LINUX')).toBe('keyring');
    expect(keystoreForStateDir('file', '/tmp/x', system, 'LINUX')).toBe('file');
  });
});

const tools = requireTools(
  [...SECRET_SERVICE_TOOLS, 'unshare'],
  'root enrolling the system state directory with a Secret Service reachable',
);
const isRoot = process.getuid?.() === 0;
const reason = tools.skip
  ? ''
  : !isRoot
    ? 'not root'
    : spawnSync('unshare', ['--mount', 'true']).status !== 0
      ? 'unshare --mount refused here'
      : '';
if (reason) console.warn(`SKIPPED: system-state keystore test (${reason})`);

describe.skipIf(tools.skip || reason !== '')(tools.title, () => {
  const running = useServer();
  const secrets = useSecretService();

  it('keeps the key in the service state directory (0600 file), not in the keyring', async () => {
    // Control: the same environment with a private state directory does reach the keyring.
    const control = await running.current.createDevice();
    const controlDir = tempDir();
    const controlRun = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--state-dir', controlDir], {
      env: agentEnv(secrets.current.env),
      input: control.enrollment_token,
    });
    expect(controlRun.code, controlRun.stderr).toBe(0);
    expect(controlRun.stdout).toMatch(/OS secret store/);
    const keyringItems = secrets.current.count({ service: 'device-agent' });
    expect(keyringItems).toBe(1);

    const device = await running.current.createDevice();
    const script = [
      'mount -t tmpfs -o mode=0755 tmpfs /var/lib || exit 97',
      `printf %s "$ENROLL_TOKEN" | "${process.execPath}" "${AGENT_BIN}" enroll --server "${running.current.url}" --token -`,
      'rc=$?',
      'stat -c "%a %n" /var/lib/device-agent /var/lib/device-agent/*',
      'cat /var/lib/device-agent/enrollment.json',
      'exit $rc',
    ].join('\n');
    const inside = spawnSync('unshare', ['--mount', 'sh', '-c', script], {
      env: { ...agentEnv(secrets.current.env), ENROLL_TOKEN: device.enrollment_token },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(inside.status, inside.stderr).toBe(0);
    expect(inside.stdout).toMatch(/^700 \/var\/lib\/device-agent$/m);
    expect(inside.stdout).toMatch(/^600 \/var\/lib\/device-agent\/api-key$/m);
    expect(inside.stdout).toMatch(/"keystore":\s*"file"/);
    expect(inside.stdout).not.toContain(device.enrollment_token);
    // Nothing new in the administrator's keyring.
    expect(secrets.current.count({ service: 'device-agent' })).toBe(keyringItems);
  });
});
