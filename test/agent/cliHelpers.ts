// Shared by the agent's CLI tests: one real reference server per test file, and checks on what the
// agent printed and stored.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { CredentialsRejectedError } from '../../src/agent/api';
import { createApiClient } from '../../src/agent/client';
import { LINK_SCHEME } from '../../src/protocol/schemas';
import { VERSION } from '../../src/version';
import { runAgent, tempDir, type AgentResult } from '../support/agent';
import { startServer, type CreatedDevice, type RunningServer } from '../support/server';
import { stringMatching } from '../support/matchers';

/** Starts the reference server for the calling test file; read `.current` inside tests. */
export function useServer(options?: Parameters<typeof startServer>[0]): { readonly current: RunningServer } {
  const holder: { current?: RunningServer } = {};
  beforeAll(async () => {
    holder.current = await startServer(options);
  });
  afterAll(async () => {
    await holder.current?.stop();
  });
  return holder as { readonly current: RunningServer };
}

const HEX_96 = /[0-9a-fA-F]{96}/;

/** A fresh state directory (not yet created). */
export function stateDir(): string {
  return join(tempDir(), 'state');
}

/** Options for a state directory with the file key store (these tests have no secret store). */
export const common = (dir: string) => ['--state-dir', dir, '--keystore', 'file'];

export function expectNoSecrets(result: AgentResult, ...secrets: string[]): void {
  for (const text of [result.stdout, result.stderr]) {
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(HEX_96);
    expect(text).not.toContain(`${LINK_SCHEME}://enroll?`);
  }
}

export function expectUserError(result: AgentResult, code: number, message: RegExp): void {
  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code, stderr: stringMatching(message) });
  expect(result.stderr).not.toMatch(/^\s+at /m); // no stack trace for a user error
}

/** Whether the server accepts `apiKey` on /heartbeat (one real request with the agent's client). */
export async function serverAccepts(server: RunningServer, apiKey: string): Promise<boolean> {
  const api = createApiClient({ serverUrl: server.url });
  try {
    await api.heartbeat(apiKey, {
      hardware_uuid: `hw-${apiKey.slice(0, 8)}`,
      hostname: 'test-host',
      platform: 'LINUX',
      os_version: 'Debian 12',
      agent_version: VERSION,
    });
    return true;
  } catch (err) {
    if (err instanceof CredentialsRejectedError) return false;
    throw err;
  } finally {
    await api.close();
  }
}

export function storedKey(dir: string): string {
  return readFileSync(join(dir, 'api-key'), 'utf8').trim();
}

/** Enrolls a fresh state directory (file key store) with the token on standard input. */
export async function enrolledDir(
  server: RunningServer,
  device?: CreatedDevice,
): Promise<{ dir: string; device: CreatedDevice; apiKey: string }> {
  const created = device ?? (await server.createDevice());
  const dir = stateDir();
  const result = await runAgent(['enroll', '--server', server.url, '--token', '-', ...common(dir)], { input: created.enrollment_token });
  expect(result.code, result.stderr).toBe(0);
  return { dir, device: created, apiKey: storedKey(dir) };
}
