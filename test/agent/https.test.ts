// Enrollment over HTTPS against the real reference server serving a certificate from a throwaway CA:
// trusted only through --ca-file / DEVICE_AGENT_CA_FILE, added to (not replacing) the default roots,
// never through NODE_TLS_REJECT_UNAUTHORIZED=0; and a server that is not loopback through HTTPS_PROXY.
import { describe, expect, it } from 'vitest';
import { agentEnv, listStateFiles, runAgent } from '../support/agent';
import { common, expectNoSecrets, expectUserError, stateDir, storedKey, useServer } from './cliHelpers';
import { startConnectProxy } from './connectProxy';
import { PROXIED_HOST, makeThrowawayCa } from './throwawayCa';

const ca = makeThrowawayCa();
const running = useServer({ tls: { cert: ca.cert, key: ca.key } });

describe('enroll over HTTPS with a private CA', () => {
  it('serves https on loopback', () => {
    expect(running.current.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('fails with exit 4 and a hint without the CA, storing nothing', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
    });
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
    const result = await runAgent(['enroll', '--link-file', '-', ...common(dir)], {
      input: device.enrollment_link,
      env: agentEnv({ DEVICE_AGENT_CA_FILE: ca.caFile }),
    });
    expect(result.code, result.stderr).toBe(0);
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
  });
});

describe('TLS verification cannot be switched off by the environment', () => {
  it('refuses the unverified server although NODE_TLS_REJECT_UNAUTHORIZED=0, and the token stays unspent', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
      env: agentEnv({ NODE_TLS_REJECT_UNAUTHORIZED: '0' }),
    });
    expectUserError(result, 4, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
    expect(listStateFiles(dir)).toEqual([]);
    const trusted = await runAgent(['enroll', '--server', running.current.url, '--token', '-', '--ca-file', ca.caFile, ...common(dir)], {
      input: device.enrollment_token,
    });
    expect(trusted.code, trusted.stderr).toBe(0);
  });
});

describe('enroll through a proxy', () => {
  it('tunnels to a server that is not loopback through HTTPS_PROXY, and goes direct for hosts in NO_PROXY', async () => {
    const proxy = await startConnectProxy({ [PROXIED_HOST]: '127.0.0.1' });
    const server = running.current.url.replace('127.0.0.1', PROXIED_HOST);
    const authority = new URL(server).host;

    const viaProxy = await running.current.createDevice();
    const dir = stateDir();
    const proxied = await runAgent(['enroll', '--server', server, '--token', '-', '--ca-file', ca.caFile, ...common(dir)], {
      input: viaProxy.enrollment_token,
      env: agentEnv({ HTTPS_PROXY: proxy.url }),
    });
    expect(proxied.code, proxied.stderr).toBe(0);
    expect(proxy.tunnels).toEqual([authority]);
    expectNoSecrets(proxied, viaProxy.enrollment_token, storedKey(dir));

    // Direct, this name does not resolve on the test machine: failing to reach it proves the proxy was skipped.
    const direct = await running.current.createDevice();
    const bypass = await runAgent(['enroll', '--server', server, '--token', '-', '--ca-file', ca.caFile, ...common(stateDir())], {
      input: direct.enrollment_token,
      env: agentEnv({ HTTPS_PROXY: proxy.url, NO_PROXY: PROXIED_HOST }),
    });
    expectUserError(bypass, 4, /ENOTFOUND|EAI_AGAIN/);
    expect(proxy.tunnels).toEqual([authority]);
    await proxy.stop();
  });
});
