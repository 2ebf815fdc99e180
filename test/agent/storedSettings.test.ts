// Stored settings are re-validated when read: an enrollment record edited to name a server over plain
// http that is not loopback (or a URL with a path, user name...) never gets the key. Every proxy points
// to a connection recorder, so a request to any host would be counted.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEnv, runAgent, startConnectionRecorder } from '../support/agent';
import { common, enrolledDir, expectNoSecrets, useServer } from './cliHelpers';

const running = useServer();

describe('the enrollment record is re-validated on every load', () => {
  it.each([
    ['plain http to a host that is not loopback', 'http://agents.example.com'],
    ['http to a name that only starts like loopback', 'http://127.attacker.example'],
    ['a URL with a user name', 'https://user@agents.example.com'],
    ['a URL with a path', 'https://agents.example.com/capture'],
  ])('%s: nothing is sent by run --once or unenroll', async (_label, tampered) => {
    const { dir, apiKey } = await enrolledDir(running.current);
    const file = join(dir, 'enrollment.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), server_url: tampered }), { mode: 0o600 });
    const recorder = await startConnectionRecorder();
    const env = agentEnv({ HTTP_PROXY: recorder.url, HTTPS_PROXY: recorder.url, DEVICE_AGENT_RETRY_ATTEMPTS: '1' });

    const once = await runAgent(['run', '--once', ...common(dir)], { env });
    expect(once.code).not.toBe(0);
    expect(`${once.stdout}${once.stderr}`).toMatch(/names a server that is not allowed/);
    expectNoSecrets(once, apiKey);

    const status = await runAgent(['status', ...common(dir)], { env });
    expect(status.stderr).toMatch(
      /names a server that is not allowed \(invalid server URL: .*\); nothing was sent: run `device-agent unenroll`/,
    );

    const unenrolled = await runAgent(['unenroll', ...common(dir)], { env });
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    expectNoSecrets(unenrolled, apiKey);
    expect(recorder.connections).toBe(0);
    await recorder.stop();
  });
});
