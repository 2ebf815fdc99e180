// enroll as a user runs it: the built CLI as a child process against the real reference server over
// HTTP on loopback, with real files. Stubs only for what a correct server cannot do (refuse
// connections, answer 503, stall). The input rules are in enrollInputRules.test.ts.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_BIN, agentEnv, listStateFiles, runAgent, tempDir } from '../support/agent';
import { startFaultProxy } from '../support/faultProxy';
import { requireTools } from '../support/requireTools';
import { startConnectProxy } from './connectProxy';
import {
  common,
  enrolledDir as enrollIn,
  expectNoSecrets,
  expectUserError,
  serverAccepts as accepts,
  stateDir,
  storedKey,
  useServer,
} from './cliHelpers';
import type { CreatedDevice } from '../support/server';
import type { EnrollmentRecord } from '../../src/agent/state';
import type { StatusReport } from '../../src/agent/status';
import { parseJson, readJson } from '../support/json';

const running = useServer();
const enrolledDir = (device?: CreatedDevice) => enrollIn(running.current, device);
const serverAccepts = (apiKey: string) => accepts(running.current, apiKey);
const terminal = requireTools(['script'], 'enroll --token - on a terminal (the two tests typing at its prompt)');

describe('enroll: the token forms and the link', () => {
  it('by --token-file: stores a working key and the server URL, owner-only, and says what comes next', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const tokenFile = join(tempDir(), 'token.txt');
    writeFileSync(tokenFile, `${device.enrollment_token}\n`, { mode: 0o600 });

    const result = await runAgent([
      'enroll',
      '--server',
      running.current.url,
      '--token-file',
      tokenFile,
      ...common(dir),
      '--log-level',
      'trace',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Enrolled with ${running.current.url}.`);
    expect(result.stdout).toContain(`device-agent run --state-dir ${dir}`);
    expectNoSecrets(result, device.enrollment_token);

    const files = listStateFiles(dir);
    expect(files.map((f) => [f.path, f.mode]).sort()).toEqual([
      ['api-key', 0o600],
      ['enrollment.json', 0o600],
    ]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const apiKey = storedKey(dir);
    expect(apiKey).toMatch(/^[0-9a-f]{96}$/);
    expect(JSON.parse(files.find((f) => f.path === 'enrollment.json')!.content!)).toMatchObject({
      state: 'enrolled',
      server_url: running.current.url,
      keystore: 'file',
    });
    // No credential anywhere but the key file.
    for (const file of files.filter((f) => f.path !== 'api-key')) {
      expect(file.content).not.toContain(apiKey);
      expect(file.content).not.toContain(device.enrollment_token);
    }
    expectNoSecrets(result, apiKey);
    expect(await serverAccepts(apiKey)).toBe(true);
    expect((await running.current.showDevice(device.device_id)).state).toBe('ACTIVE');
  });

  it('by --token - (standard input)', async () => {
    const { apiKey } = await enrolledDir();
    expect(await serverAccepts(apiKey)).toBe(true);
  });

  it.skipIf(terminal.skip)('by --token - on a terminal: prompts, and does not echo the token', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    // util-linux `script` gives the agent a real pseudo-terminal; the token is typed after the prompt.
    const command = [AGENT_BIN, 'enroll', '--server', running.current.url, '--token', '-', ...common(dir)].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', `'${process.execPath}' ${command}`, '/dev/null'], {
      env: agentEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let typed = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (!typed && output.includes('Enrollment token (not shown): ')) {
        typed = true;
        child.stdin.write(`${device.enrollment_token}\r`);
      }
    });
    const [code] = (await once(child, 'close')) as [number];
    expect(code, output).toBe(0);
    expect(output).toContain('Enrolled with');
    expect(output).not.toContain(device.enrollment_token);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
  });

  it.skipIf(terminal.skip)('by --token - on a terminal: Ctrl-C at the prompt exits 2 and leaves the terminal echoing', async () => {
    const dir = stateDir();
    // After the agent, `stty -a` on the same pseudo-terminal shows whether echo came back.
    const command = [AGENT_BIN, 'enroll', '--server', running.current.url, '--token', '-', ...common(dir)].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', `'${process.execPath}' ${command}; echo "exit=$?"; stty -a`, '/dev/null'], {
      env: agentEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (!output.includes('(not shown): ') && (output + chunk).includes('(not shown): ')) child.stdin.write('abc\u0003');
      output += chunk;
    });
    await once(child, 'close');
    expect(output).toContain('no enrollment token entered');
    expect(output).toContain('exit=2');
    expect(output).toMatch(/(^|\s)echo(\s|$)/m);
    expect(output).not.toMatch(/(^|\s)-echo(\s|$)/m);
    expect(output).toMatch(/(^|\s)icanon(\s|$)/m);
    expect(existsSync(dir)).toBe(false);
  });

  it('by --token <hex> on the command line', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', device.enrollment_token, ...common(dir)]);
    expect(result.code, result.stderr).toBe(0);
    expectNoSecrets(result, device.enrollment_token);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
  });

  it('by DEVICE_AGENT_SERVER, DEVICE_AGENT_TOKEN, DEVICE_AGENT_STATE_DIR and DEVICE_AGENT_KEYSTORE', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const env = agentEnv({
      DEVICE_AGENT_SERVER: running.current.url,
      DEVICE_AGENT_TOKEN: device.enrollment_token,
      DEVICE_AGENT_STATE_DIR: dir,
      DEVICE_AGENT_KEYSTORE: 'file',
      DEVICE_AGENT_LOG_LEVEL: 'trace',
    });
    const result = await runAgent(['enroll'], { env });
    expect(result.code, result.stderr).toBe(0);
    expectNoSecrets(result, device.enrollment_token);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
    // A flag overrides the environment: another state directory, untouched token source.
    const status = await runAgent(['status', '--json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ enrolled: true, state_dir: dir });
  });

  it('refuses the enrollment link as the single argument (exit 2) with the safe forms, and spends nothing', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', device.enrollment_link, ...common(dir)]);
    expectUserError(result, 2, /an enrollment link is not accepted as an argument: other local users can read it in the process list/);
    expect(result.stderr).toContain(
      'Nothing was sent; give it with --link-file <path> (a file only you can read) or --link-file - (standard input)',
    );
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
    expect(existsSync(dir)).toBe(false); // nothing written, not even the state directory
    expect((await running.current.showDevice(device.device_id)).state).toBe('PENDING');
    // The token is unspent: the safe form enrolls with it.
    const safe = await runAgent(['enroll', '--link-file', '-', ...common(dir)], { input: device.enrollment_link });
    expect(safe.code, safe.stderr).toBe(0);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
  });

  it('with DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 (old scripts) takes the link as the argument: enrolled, with a warning showing the safe forms', async () => {
    const device = await running.current.createDevice();
    const dir = stateDir();
    const result = await runAgent(['enroll', device.enrollment_link, ...common(dir), '--log-level', 'trace'], {
      env: agentEnv({ DEVICE_AGENT_ALLOW_LINK_ARGUMENT: '1' }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Enrolled with ${running.current.url}.`);
    expect(result.stderr).toContain(
      'device-agent: warning: an enrollment link given as an argument can be read by other local users in the process list',
    );
    expect(result.stderr).toContain('give it with --link-file <path> (a file only you can read) or --link-file - (standard input) instead');
    expectNoSecrets(result, device.enrollment_token, device.enrollment_link);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
  });
});

describe('loopback is never proxied', () => {
  it.each(['127.0.0.1', 'localhost'])('enrolls with http://%s directly although HTTP(S)_PROXY is set', async (host) => {
    const proxy = await startConnectProxy();
    const device = await running.current.createDevice();
    const dir = stateDir();
    const server = running.current.url.replace('127.0.0.1', host);
    const result = await runAgent(['enroll', '--server', server, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
      env: agentEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, ALL_PROXY: proxy.url }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(proxy.tunnels).toEqual([]); // the proxy never saw the Authorization header of later requests
    const unenrolled = await runAgent(['unenroll', ...common(dir)], { env: agentEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url }) });
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expect(unenrolled.stdout).toContain('The server confirmed: the API key is revoked.');
    expect(proxy.tunnels).toEqual([]);
    await proxy.stop();
  });
});

describe('enroll: refused tokens and unreachable servers store nothing', () => {
  it('a used token exits 3 with the advice, and leaves no file', async () => {
    const { device } = await enrolledDir();
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir), '--log-level', 'trace'], {
      input: device.enrollment_token,
    });
    expectUserError(result, 3, /token invalid, expired or already used: ask for a new one/);
    expectNoSecrets(result, device.enrollment_token);
    expect(listStateFiles(dir)).toEqual([]);
  });

  it('an unknown or expired token exits 3', async () => {
    const unknown = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(stateDir())], {
      input: 'f'.repeat(96),
    });
    expectUserError(unknown, 3, /already used: ask for a new one/);

    const device = await running.current.createDevice({ tokenTtl: '1s' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const dir = stateDir();
    const expired = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
    });
    expectUserError(expired, 3, /ask for a new one/);
    expect(listStateFiles(dir)).toEqual([]);
  });

  it('a closed port exits 4; the token stays usable', async () => {
    const device = await running.current.createDevice();
    // Port 1 (tcpmux) is closed here, and never handed out as an ephemeral port to another test's
    // listener, unlike a port freed a moment ago.
    const closedPort = 1;
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', `http://127.0.0.1:${closedPort}`, '--token', '-', ...common(dir)], {
      input: device.enrollment_token,
    });
    expectUserError(result, 4, /cannot reach http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED.*not enrolled; try again later/);
    expect(listStateFiles(dir)).toEqual([]);
    await enrolledDir(device); // not spent
  });

  it('a 503 is retried after its Retry-After, three attempts in all, then exits 4', async () => {
    const arrivals: number[] = [];
    const stub: Server = createServer((_req, res) => {
      arrivals.push(Date.now());
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify({ error: 'internal_error', message: 'maintenance' }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    const dir = stateDir();
    const result = await runAgent(['enroll', '--server', url, '--token', '-', ...common(dir)], { input: 'a'.repeat(96) });
    expectUserError(result, 4, /the server answered enroll with 503: maintenance/);
    expect(arrivals).toHaveLength(3);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(1_000);
    expect(listStateFiles(dir)).toEqual([]);
    await new Promise<void>((resolve) => stub.close(() => resolve()));
  });
});

describe('enroll: existing enrollments and concurrency', () => {
  it('refuses to enroll over an enrollment, without spending the token; --force replaces it', async () => {
    const { dir, apiKey: oldKey } = await enrolledDir();
    const next = await running.current.createDevice();

    const refused = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: next.enrollment_token,
    });
    expectUserError(refused, 2, /already enrolled with http:\/\/127\.0\.0\.1:\d+ .*--force/);
    expect(storedKey(dir)).toBe(oldKey);

    const forced = await runAgent(['enroll', '--force', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: next.enrollment_token,
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`Replaced the previous enrollment with ${running.current.url} (the server revoked the API key).`);
    const newKey = storedKey(dir);
    expect(newKey).not.toBe(oldKey);
    expect(await serverAccepts(oldKey)).toBe(false);
    expect(await serverAccepts(newKey)).toBe(true);
  });

  it('serialises concurrent enrollments of one state directory: one wins, the other is refused unspent', async () => {
    const [first, second] = await Promise.all([running.current.createDevice(), running.current.createDevice()]);
    const dir = stateDir();
    const results = await Promise.all(
      [first, second].map((device) =>
        runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], { input: device.enrollment_token }),
      ),
    );
    expect(results.map((r) => r.code).sort()).toEqual([0, 2]);
    const loser = results.findIndex((r) => r.code === 2);
    expect(results[loser]!.stderr).toMatch(/already enrolled/);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
    // The refused token was never sent: it still enrolls elsewhere.
    await enrolledDir([first, second][loser]);
    expect(
      listStateFiles(dir)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['api-key', 'enrollment.json']);
  });

  it('cleans up after an enrollment killed mid-flight', async () => {
    const proxy = await startFaultProxy(running.current.url);
    proxy.add({ route: 'enroll', fault: { kind: 'delay', ms: 10_000 } });
    const device = await running.current.createDevice();
    const dir = stateDir();
    const child = spawn(
      process.execPath,
      [AGENT_BIN, 'enroll', '--server', proxy.url, '--token', device.enrollment_token, ...common(dir)],
      {
        env: agentEnv(),
        stdio: 'ignore',
      },
    );
    await proxy.waitFor((seen) => seen.some((r) => r.route === 'enroll'));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(readJson<EnrollmentRecord>(join(dir, 'enrollment.json')).state).toBe('enrolling');
    await proxy.stop();

    const status = await runAgent(['status', '--json', ...common(dir)]);
    expect(status.code).toBe(5);
    expect(parseJson<StatusReport>(status.stdout).enrolled).toBe(false);
    const again = await running.current.createDevice();
    const result = await runAgent(['enroll', '--server', running.current.url, '--token', '-', ...common(dir)], {
      input: again.enrollment_token,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(await serverAccepts(storedKey(dir))).toBe(true);
  });
});
