// Every input rule of enroll exits 2 before any request: the built CLI is pointed at a listener
// that counts connections, which is also every proxy, so a request to any host would be seen.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINK_SCHEME } from '../../src/protocol/schemas';
import { agentEnv, listStateFiles, runAgent, startConnectionRecorder, tempDir } from '../support/agent';
import { expectNoSecrets, expectUserError, stateDir } from './cliHelpers';

describe.concurrent('enroll: every input rule exits 2 before any request', () => {
  const token = 'ab'.repeat(48);
  // The link as an argument, through the opt-in that keeps old scripts working (docs/agent.md): its rules are checked before anything is sent.
  const LEGACY_LINK_ARGUMENT = { DEVICE_AGENT_ALLOW_LINK_ARGUMENT: '1' };
  const goodLink = (server: string, t = token) => `${LINK_SCHEME}://enroll?server=${encodeURIComponent(server)}&token=${t}`;

  it.each<[string, (target: string, tokenFile: string) => { args: string[]; input?: string; env?: NodeJS.ProcessEnv }, RegExp]>([
    [
      'http on a non-loopback host',
      () => ({ args: ['--server', 'http://agents.example.com', '--token', token] }),
      /plain http is allowed only for loopback/,
    ],
    ['a scheme other than https', () => ({ args: ['--server', 'ftp://127.0.0.1', '--token', token] }), /scheme must be https/],
    ['a server URL with a path', (t) => ({ args: ['--server', `${t}/api/agent/v1`, '--token', token] }), /must not have a path/],
    ['a server URL with a query', (t) => ({ args: ['--server', `${t}/?next=1`, '--token', token] }), /must not have a query/],
    ['a server URL with a fragment', (t) => ({ args: ['--server', `${t}#x`, '--token', token] }), /must not have a fragment/],
    [
      'a server URL with userinfo',
      (t) => ({ args: ['--server', t.replace('//', '//admin:pw@'), '--token', token] }),
      /user name or password/,
    ],
    ['a server without scheme', () => ({ args: ['--server', 'agents.example.com', '--token', token] }), /has no scheme/],
    ['a short token', (t) => ({ args: ['--server', t, '--token', token.slice(1)] }), /from --token: .*95 characters/],
    ['a non-hex token', (t) => ({ args: ['--server', t, '--token', `${token.slice(1)}z`] }), /not all hexadecimal/],
    ['a bad token on standard input', (t) => ({ args: ['--server', t, '--token', '-'], input: 'nope\n' }), /from standard input/],
    ['an empty standard input', (t) => ({ args: ['--server', t, '--token', '-'], input: '' }), /from standard input: .*it is empty/],
    ['a bad token file', (t, file) => ({ args: ['--server', t, '--token-file', file] }), /from --token-file/],
    [
      'a missing token file',
      (t) => ({ args: ['--server', t, '--token-file', '/nonexistent/token'] }),
      /cannot read the token file .*ENOENT/,
    ],
    [
      'a directory as token file',
      (t) => ({ args: ['--server', t, '--token-file', '/tmp'] }),
      /cannot read the token file \/tmp: not a regular file/,
    ],
    [
      'a bad DEVICE_AGENT_TOKEN',
      (t) => ({ args: [], env: { DEVICE_AGENT_SERVER: t, DEVICE_AGENT_TOKEN: 'x' } }),
      /from DEVICE_AGENT_TOKEN/,
    ],
    [
      'a bad DEVICE_AGENT_SERVER',
      () => ({ args: ['--token', token], env: { DEVICE_AGENT_SERVER: 'http://example.com' } }),
      /only for loopback/,
    ],
    ['no server', () => ({ args: ['--token', token] }), /missing the server/],
    ['no token', (t) => ({ args: ['--server', t] }), /missing the enrollment token/],
    ['both --token and --token-file', (t, file) => ({ args: ['--server', t, '--token', token, '--token-file', file] }), /not both/],
    [
      'the link and --server',
      (t) => ({ args: [goodLink(t), '--server', t], env: LEGACY_LINK_ARGUMENT }),
      /either the enrollment link or --server/,
    ],
    [
      'the link and --token',
      (t) => ({ args: [goodLink(t), '--token', token], env: LEGACY_LINK_ARGUMENT }),
      /either the enrollment link or --server/,
    ],
    [
      'a link with another host',
      (t) => ({ args: [goodLink(t).replace('//enroll', '//login')], env: LEGACY_LINK_ARGUMENT }),
      /host must be "enroll"/,
    ],
    [
      'a link with another scheme',
      (t) => ({ args: [goodLink(t).replace(LINK_SCHEME, 'https')], env: LEGACY_LINK_ARGUMENT }),
      /scheme must be device-agent/,
    ],
    [
      'a link with an extra parameter',
      (t) => ({ args: [`${goodLink(t)}&redirect=x`], env: LEGACY_LINK_ARGUMENT }),
      /only the "server" and "token" parameters/,
    ],
    [
      'a link with the token twice',
      (t) => ({ args: [`${goodLink(t)}&token=${token}`], env: LEGACY_LINK_ARGUMENT }),
      /"token" parameter must appear exactly once/,
    ],
    [
      'a link without server',
      () => ({ args: [`${LINK_SCHEME}://enroll?token=${token}`], env: LEGACY_LINK_ARGUMENT }),
      /"server" parameter must appear exactly once/,
    ],
    [
      'a link to plain http elsewhere',
      () => ({ args: [goodLink('http://agents.example.com')], env: LEGACY_LINK_ARGUMENT }),
      /only for loopback/,
    ],
    [
      'a link with a short token',
      (t) => ({ args: [goodLink(t, token.slice(2))], env: LEGACY_LINK_ARGUMENT }),
      /from the enrollment link: .*94 characters/,
    ],
    ['an unknown key store', (t) => ({ args: ['--server', t, '--token', token, '--keystore', 'vault'] }), /argument 'vault' is invalid/],
    ['an unknown option carrying the token', (t) => ({ args: ['--server', t, `--tokn=${token}`] }), /unknown option '--tokn=\[redacted\]'/],
    [
      'an unreadable CA file',
      (t) => ({ args: ['--server', t, '--token', token, '--ca-file', '/nonexistent.pem'] }),
      /cannot read the CA file/,
    ],
    [
      'a state directory that cannot be created',
      (t) => ({ args: ['--server', t, '--token', token, '--state-dir', '/dev/null/state'] }),
      /cannot use the state directory \/dev\/null\/state: ENOTDIR/,
    ],
    [
      'a CA file without certificate',
      (t, file) => ({ args: ['--server', t, '--token', token, '--ca-file', file] }),
      /contains no PEM certificate/,
    ],
  ])('%s', async (_label, build, message) => {
    const badTokenFile = join(tempDir(), 'token');
    writeFileSync(badTokenFile, 'not-a-token\n');
    const recorder = await startConnectionRecorder();
    const { args, input, env } = build(recorder.url, badTokenFile);
    const dir = stateDir();
    // The recorder is also every proxy: a request to any host would reach it.
    // Given last, so that a case's own --state-dir or --keystore wins.
    const result = await runAgent(['enroll', '--state-dir', dir, '--keystore', 'file', '--log-level', 'trace', ...args], {
      input,
      env: agentEnv({ HTTP_PROXY: recorder.url, HTTPS_PROXY: recorder.url, ...env }),
    });
    expectUserError(result, 2, message);
    expectNoSecrets(result, token);
    expect(recorder.connections).toBe(0);
    await recorder.stop();
    expect(existsSync(dir) ? listStateFiles(dir) : []).toEqual([]);
  });
});
