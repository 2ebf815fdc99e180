// Enrollment over HTTPS against the real reference server serving a certificate from a throwaway CA:
// trusted only through --ca-file / DEVICE_AGENT_CA_FILE, added to (not replacing) the default roots.
import { describe, expect, it } from 'vitest';
import { agentEnv, listStateFiles, runAgent } from '../support/agent';
import { common, expectNoSecrets, expectUserError, stateDir, storedKey, useServer } from './cliHelpers';
import { makeThrowawayCa } from './throwawayCa';

const ca = makeThrowawayCa();
const running = useServer({ tls: { cert: ca.cert, key: ca.key } });

describe('enroll over HTTPS with a private CA', () => {
  it('serves https on loopback', () => {
    expect(running.current.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('fails with exit 4 and a hint without the CA, storing nothing', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], { input: device.enrollment_token });
    expectUserError(result, 4, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
    expect(result.stderr).toContain('pass it with --ca-file or DEVICE_AGENT_CA_FILE');
    expect(listStateFiles(dir)).toEqual([]);
  });

  it('enrolls with --ca-file, and unenroll reuses the CA recorded at enrollment', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--ca-file', ca.caFile, ...common(dir)], {
      input: device.enrollment_token,
    });
    expect(result.code, result.stderr).toBe(0);
    expectNoSecrets(result, device.enrollment_token, storedKey(dir));
    expect((await running.current.showDevice(device.device_id)).state).toBe('PENDING');

    const unenrolled = await runAgent(['unenroll', ...common(dir)]);
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(unenrolled.stdout).toContain('The server confirmed: the API key is revoked.');
  });

  it('enrolls by the link with DEVICE_AGENT_CA_FILE', async () => {
    const device = await running.current.createDevice();
    expect(device.enrollment_link).toContain(encodeURIComponent(running.current.url));
    const dir = stateDir();
    const result = await runAgent(['enroll', device.enrollment_link, ...common(dir)], { env: agentEnv({ DEVICE_AGENT_CA_FILE: ca.caFile }) });
    expect(result.code, result.stderr).toBe(0);
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
  });
});
