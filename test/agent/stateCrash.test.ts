// A crash at any point of enroll, unenroll or a wipe: a child process runs the state owner's
// transaction and is killed (SIGKILL, from inside, at the named step: OpenOptions.afterStep, which
// no command sets), then the next start (openAgentState) must find a state it finishes or rolls back:
// an enrollment is never half there, a wipe never leaves a key, a queue or a record behind, and the
// reason of a 401 survives the crash.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAgentState, type StateStep } from '../../src/agent/state';
import { STATE_STEPS } from '../../src/agent/state/agentState';
import { tempDir } from '../support/agent';
import { enrollState, results } from '../daemon/inProcess';

const API_KEY = 'c'.repeat(96);
const NOTE = { reason: 'the server rejected the API key (401 on /heartbeat)', revoked_at: '2026-05-02T00:00:00.000Z' };
const STATE_MODULE = new URL('../../src/agent/state/index.ts', import.meta.url).href;

type Operation = 'enroll' | 'unenroll' | 'wipe';

/** Runs `operation` on `dir` in a child process that kills itself (SIGKILL) right after `step`. */
function crashAt(dir: string, operation: Operation, step: StateStep): Promise<NodeJS.Signals | null> {
  const script = `
    const { openAgentState } = await import(${JSON.stringify(STATE_MODULE)});
    const state = await openAgentState(${JSON.stringify(dir)}, {
      deferRecovery: true,
      afterStep: (step) => { if (step === ${JSON.stringify(step)}) process.kill(process.pid, 'SIGKILL'); },
    });
    const logger = { info() {}, debug() {} };
    const operation = ${JSON.stringify(operation)};
    if (operation === 'enroll') {
      await state.enroll(
        { serverUrl: 'https://crash.invalid', keystore: 'file', force: false, logger },
        { exchange: async () => ({ apiKey: ${JSON.stringify(API_KEY)}, enrolledWith: { method: 'token' } }), discard: async () => {}, revoke: async () => null },
      );
    } else if (operation === 'unenroll') {
      await state.unenroll(async () => 'revoked');
    } else {
      await state.wipe(${JSON.stringify(NOTE)});
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(signal) : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
}

/** A state directory enrolled with the file store, with a status and a queued cycle. */
async function enrolledDir(): Promise<string> {
  const dir = join(tempDir(), 'state');
  const state = await openAgentState(dir);
  await enrollState(state, API_KEY);
  await state.status.update({ device_id: 'dev_crash', queued_results: 2 });
  await (await state.queue()).append(results('QUEUED', 2));
  return dir;
}

const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const recordState = (dir: string) => (JSON.parse(readFileSync(join(dir, 'enrollment.json'), 'utf8')) as { state: string }).state;
const steps = (prefix: string) => STATE_STEPS.filter((step) => step.startsWith(prefix));

describe('a crash during enroll', () => {
  it.each(steps('enroll:'))('after %s: the next start rolls the enrollment back, and enrolling again works', async (step) => {
    const dir = join(tempDir(), 'state');
    expect(await crashAt(dir, 'enroll', step)).toBe('SIGKILL');
    expect(recordState(dir)).toBe('enrolling');

    const state = await openAgentState(dir);
    expect(await state.enrollment()).toBeNull();
    expect(files(dir)).toEqual([]); // no key, no record, no temp file, no lock left behind
    await enrollState(state, 'd'.repeat(96));
    expect(await state.credentials()).toMatchObject({ apiKey: 'd'.repeat(96), enrollment: { state: 'enrolled' } });
  });
});

describe('a crash during the wipe after a 401', () => {
  it.each(steps('wipe:'))('after %s: the next start finishes the wipe and keeps why', async (step) => {
    const dir = await enrolledDir();
    expect(await crashAt(dir, 'wipe', step)).toBe('SIGKILL');
    expect(recordState(dir)).toBe('wiping');

    const state = await openAgentState(dir);
    expect(await state.enrollment()).toBeNull();
    expect(files(dir)).toEqual(['status.json']);
    expect(await state.status.read()).toEqual(NOTE);
  });
});

describe('a crash during unenroll', () => {
  it('after the server revoked the key: still enrolled as before, and the next unenroll finishes', async () => {
    const dir = await enrolledDir();
    expect(await crashAt(dir, 'unenroll', 'unenroll:revoked')).toBe('SIGKILL');
    expect(recordState(dir)).toBe('enrolled');

    const state = await openAgentState(dir);
    expect(await state.credentials()).toMatchObject({ apiKey: API_KEY });
    expect(await state.unenroll(() => Promise.resolve('already_revoked'))).toEqual({
      serverUrl: 'https://scripted.invalid',
      revocation: 'already_revoked',
    });
    expect(files(dir)).toEqual([]);
  });

  it.each(steps('wipe:'))('after %s: the next start finishes the wipe', async (step) => {
    const dir = await enrolledDir();
    expect(await crashAt(dir, 'unenroll', step)).toBe('SIGKILL');
    expect(recordState(dir)).toBe('wiping');

    const state = await openAgentState(dir);
    expect(await state.enrollment()).toBeNull();
    expect(files(dir)).toEqual([]); // without a note, status.json goes too
  });
});
