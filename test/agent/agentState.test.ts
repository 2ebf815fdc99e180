// The state owner's transactions in process, on real temp directories with the file key store
// (keyring.test.ts drives the keyring through the commands: libdbus reads the session bus address
// once per process, so a Secret Service cannot be swapped in here; stateCrash.test.ts kills each
// transaction at each step). The server's part is a script here: enrollment.ts and unenrollment.ts are tested
// against the real server by enroll.test.ts and statusUnenroll.test.ts.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import {
  AlreadyEnrolledError,
  InvalidInputError,
  KeyMissingError,
  KeyStoreUnavailableError,
  LockHeldError,
  NotEnrolledError,
  StateCorruptError,
  UntrustedStateError,
} from '../../src/agent/errors';
import { openAgentState, type AgentState, type EnrollmentRecord } from '../../src/agent/state';
import { acquireLock } from '../../src/agent/state/lock';
import { tempDir } from '../support/agent';
import { results } from '../daemon/inProcess';

const KEY_A = 'a'.repeat(96);
const KEY_B = 'b'.repeat(96);
const NOTE = { reason: 'the server rejected the API key (401 on /postures)', revoked_at: '2026-05-02T10:00:00.000Z' };

function logger() {
  const log = pino({ level: 'silent' });
  return Object.assign(log, { info: vi.fn(), debug: vi.fn() });
}

function protocol(apiKey = KEY_A) {
  return {
    exchange: vi.fn(() => Promise.resolve({ apiKey, enrolledWith: { method: 'token' as const } })),
    discard: vi.fn(() => Promise.resolve()),
    revoke: vi.fn<(record: EnrollmentRecord, apiKey: string | null) => Promise<string>>(() => Promise.resolve('revoked')),
  };
}

const plan = (overrides: { force?: boolean; caFile?: string; log?: ReturnType<typeof logger> } = {}) => ({
  serverUrl: 'https://agent-state.invalid',
  keystore: 'file' as const,
  force: overrides.force ?? false,
  logger: overrides.log ?? logger(),
  ...(overrides.caFile ? { caFile: overrides.caFile } : {}),
});

const newDir = () => join(tempDir(), 'state');
const files = (dir: string) => readdirSync(dir).sort();
const record = (dir: string) => JSON.parse(readFileSync(join(dir, 'enrollment.json'), 'utf8')) as EnrollmentRecord;

async function enrolled(apiKey = KEY_A): Promise<{ dir: string; state: AgentState }> {
  const dir = newDir();
  const state = await openAgentState(dir);
  await state.enroll(plan(), protocol(apiKey));
  return { dir, state };
}

describe('openAgentState', () => {
  it('refuses a directory others may change, unless opened read-only without verifying (doctor reports it)', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770);
    await expect(openAgentState(dir)).rejects.toBeInstanceOf(UntrustedStateError);
    await expect(openAgentState(dir, { readOnly: true })).rejects.toBeInstanceOf(UntrustedStateError);
    const state = await openAgentState(dir, { readOnly: true, verify: false });
    await expect(state.verify()).rejects.toBeInstanceOf(UntrustedStateError);
    expect(state.dir).toBe(dir);
  });

  it('verifies a directory it may write to even when told not to: only a read-only open skips it', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770);
    await expect(openAgentState(dir, { verify: false })).rejects.toBeInstanceOf(UntrustedStateError);
    await expect(openAgentState(dir, { verify: false, deferRecovery: true })).rejects.toBeInstanceOf(UntrustedStateError);
  });

  it('finishes an enrollment cut short, but not read-only, not when deferred, and not while its holder lives', async () => {
    const { dir } = await enrolled();
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'enrolling' }));

    await openAgentState(dir, { readOnly: true });
    await openAgentState(dir, { deferRecovery: true });
    expect(record(dir).state).toBe('enrolling');
    expect(await (await openAgentState(dir, { readOnly: true })).credentials()).toBeNull();
    expect(record(dir).state).toBe('enrolling'); // read-only credentials() finish nothing either

    const held = await acquireLock(join(dir, 'enrollment.lock'), { wait: false });
    await openAgentState(dir);
    expect(record(dir).state).toBe('enrolling'); // someone is working on it
    await held.release();

    const state = await openAgentState(dir);
    expect(files(dir)).toEqual([]);
    expect(await state.enrollment()).toBeNull();
  });

  it('leaves an unreadable record to the commands that say what to do about it', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'enrollment.json'), '{not json', { mode: 0o600 });
    const state = await openAgentState(dir);
    expect(files(dir)).toEqual(['enrollment.json']);
    await expect(state.credentials()).rejects.toBeInstanceOf(StateCorruptError);
  });
});

describe('enroll', () => {
  it('records the enrollment, stores the key owner-only, and clears an old revocation notice', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'status.json'), JSON.stringify(NOTE), { mode: 0o600 });
    const state = await openAgentState(dir);
    const enrolledWith = { method: 'enroll_secret' as const, secret_id: 'secret-id-1' };
    const exchange = { ...protocol(), exchange: vi.fn(() => Promise.resolve({ apiKey: KEY_A, enrolledWith })) };
    const log = logger();
    const outcome = await state.enroll(plan({ caFile: 'relative/ca.pem', log }), exchange);

    expect(outcome).toEqual({ keystore: 'file' });
    expect(exchange.exchange).toHaveBeenCalledTimes(1);
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
    expect(statSync(join(dir, 'api-key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'api-key'), 'utf8')).toBe(`${KEY_A}\n`);
    expect(record(dir)).toEqual({
      version: 1,
      state: 'enrolled',
      server_url: 'https://agent-state.invalid',
      keystore: 'file',
      ca_file: join(process.cwd(), 'relative/ca.pem'),
      enrolled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      // How it enrolled: the secret's id only (the secret never reaches the state directory).
      enrolled_with: enrolledWith,
    });
    expect(await state.credentials()).toEqual({ enrollment: record(dir), apiKey: KEY_A });
    expect(log.debug.mock.calls).toEqual([
      [{ keystore: 'file', state_dir: dir, fallback_reason: undefined }, 'key store selected'],
      [{ server_url: 'https://agent-state.invalid', keystore: 'file' }, 'enrolled'],
    ]);
  });

  it('with `auto` and no secret store to reach, stores the key in the file and says why', async () => {
    const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
    delete process.env.DBUS_SESSION_BUS_ADDRESS; // keyring.test.ts runs the keyring on a private bus
    try {
      const dir = newDir();
      const state = await openAgentState(dir);
      expect(await state.prospectiveKeyStore('auto')).toBe('file');
      const outcome = await state.enroll({ ...plan(), keystore: 'auto' }, protocol());
      expect(outcome).toEqual({ keystore: 'file', keystoreFallbackReason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)' });
      expect(record(dir)).not.toHaveProperty('keyring_entry');
      expect((await state.credentials())?.apiKey).toBe(KEY_A);
    } finally {
      if (bus !== undefined) process.env.DBUS_SESSION_BUS_ADDRESS = bus;
    }
  });

  it('refuses an existing enrollment without --force, changing nothing', async () => {
    const { dir, state } = await enrolled();
    const before = readFileSync(join(dir, 'enrollment.json'), 'utf8');
    const exchange = protocol(KEY_B);
    await expect(state.enroll(plan(), exchange)).rejects.toBeInstanceOf(AlreadyEnrolledError);
    expect(exchange.exchange).not.toHaveBeenCalled();
    expect(readFileSync(join(dir, 'enrollment.json'), 'utf8')).toBe(before);
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
  });

  it('with --force revokes the enrollment it replaces, with its key, then enrolls', async () => {
    const { dir, state } = await enrolled();
    const old = record(dir);
    const exchange = protocol(KEY_B);
    const log = logger();
    const outcome = await state.enroll(plan({ force: true, log }), exchange);
    expect(exchange.revoke).toHaveBeenCalledWith(old, KEY_A);
    expect(outcome).toEqual({ keystore: 'file', replaced: { serverUrl: 'https://agent-state.invalid', revocation: 'revoked' } });
    expect((await state.credentials())?.apiKey).toBe(KEY_B);
    expect(log.info).toHaveBeenCalledWith(expect.objectContaining({ server_url: old.server_url }), expect.stringMatching(/--force/));
  });

  it('with --force revokes without a key when the store lost it, and replaces an unreadable record', async () => {
    const { dir, state } = await enrolled();
    writeFileSync(join(dir, 'api-key'), '');
    const exchange = protocol(KEY_B);
    await state.enroll(plan({ force: true }), exchange);
    expect(exchange.revoke).toHaveBeenCalledWith(expect.objectContaining({ state: 'enrolled' }), null);

    writeFileSync(join(dir, 'enrollment.json'), '{not json');
    await expect(state.enroll(plan(), protocol())).rejects.toBeInstanceOf(StateCorruptError);
    const replacing = protocol();
    const log = logger();
    expect(await state.enroll(plan({ force: true, log }), replacing)).toEqual({ keystore: 'file' });
    expect(log.info).toHaveBeenCalledWith('the enrollment record is unreadable: --force replaces it');
    expect(replacing.revoke).not.toHaveBeenCalled();
    expect((await state.credentials())?.apiKey).toBe(KEY_A);
  });

  it('finishes an interrupted enrollment it finds under the lock, then enrolls', async () => {
    const { dir, state } = await enrolled();
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'wiping' }));
    const exchange = protocol(KEY_B);
    const log = logger();
    await state.enroll(plan({ log }), exchange);
    expect(exchange.revoke).not.toHaveBeenCalled();
    expect((await state.credentials())?.apiKey).toBe(KEY_B);
    expect(log.info).toHaveBeenCalledWith({ state: 'wiping' }, expect.stringMatching(/cut short/));
  });

  it('leaves nothing behind when the token is refused', async () => {
    const dir = newDir();
    const state = await openAgentState(dir);
    const refused = { ...protocol(), exchange: vi.fn(() => Promise.reject(new Error('token refused'))) };
    await expect(state.enroll(plan(), refused)).rejects.toThrow('token refused');
    expect(files(dir)).toEqual([]);
  });

  it('revokes a key it could not store and says the token is spent', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'api-key'), { recursive: true, mode: 0o700 }); // the key file cannot be written
    const state = await openAgentState(dir);
    const exchange = protocol();
    const failure = await state.enroll(plan(), exchange).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(KeyStoreUnavailableError);
    const { message } = failure as Error;
    // The store's own reason, once, then what the user must do.
    expect(message.startsWith(`the key file cannot be used: ${join(dir, 'api-key')}: E`)).toBe(true);
    expect(message.match(/the key file cannot be used/g)).toHaveLength(1);
    expect(message).toMatch(/ \(the enrollment token was used up: ask for a new one\)$/);
    expect(exchange.discard).toHaveBeenCalledWith(KEY_A);
    expect(existsSync(join(dir, 'enrollment.json'))).toBe(false);
  });

  it('refuses a state directory it cannot create as an input error', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const state = await openAgentState(join(file, 'state'));
    const failure = await state.enroll(plan(), protocol()).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(InvalidInputError);
    expect((failure as Error).message).toMatch(new RegExp(`^cannot use the state directory ${join(file, 'state')}: ENOTDIR`));
  });

  it('refuses a directory that others may change since it was opened, as untrusted, changing nothing', async () => {
    const dir = newDir();
    const state = await openAgentState(dir);
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o770);
    const exchange = protocol();
    await expect(state.enroll(plan(), exchange)).rejects.toBeInstanceOf(UntrustedStateError);
    expect(exchange.exchange).not.toHaveBeenCalled();
    expect(files(dir)).toEqual([]);
  });

  it('waits for another enrollment of the same directory, and says so', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    const held = await acquireLock(join(dir, 'enrollment.lock'), { wait: false });
    const state = await openAgentState(dir, { deferRecovery: true });
    const log = logger();
    const enrolling = state.enroll(plan({ log }), protocol());
    await vi.waitFor(() => expect(log.info).toHaveBeenCalledWith({ holder_pid: process.pid }, expect.stringMatching(/waiting/)));
    expect(existsSync(join(dir, 'enrollment.json'))).toBe(false);
    await held.release();
    await enrolling;
    expect(record(dir).state).toBe('enrolled');
  });
});

describe('credentials', () => {
  it('finishes an enrollment another process left cut short, and says not enrolled', async () => {
    const { dir, state } = await enrolled();
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'enrolling' }));
    expect(await state.credentials()).toBeNull();
    expect(files(dir)).toEqual([]);
    expect(await state.enrollment()).toBeNull();
  });

  it('is null without an enrollment, and reports a missing or malformed key as missing, never as not enrolled', async () => {
    expect(await (await openAgentState(newDir())).credentials()).toBeNull();
    const { dir, state } = await enrolled();
    writeFileSync(join(dir, 'api-key'), 'short\n');
    const fix = 'run `device-agent unenroll`, then enroll again with a new token';
    await expect(state.credentials()).rejects.toThrow(`the key file cannot be used: the API key it holds is malformed; ${fix}`);
    await expect(state.credentials()).rejects.toBeInstanceOf(KeyMissingError);
    rmSync(join(dir, 'api-key'));
    await expect(state.credentials()).rejects.toThrow(`the key file cannot be used: it no longer holds this enrollment's API key; ${fix}`);
  });
});

describe('unenroll', () => {
  it('revokes with the key, then wipes everything', async () => {
    const { dir, state } = await enrolled();
    await state.status.update({ device_id: 'dev_1' });
    await (await state.queue()).append(results('Q', 2));
    const revoke = vi.fn(() => Promise.resolve('revoked'));
    expect(await state.unenroll(revoke)).toEqual({ serverUrl: 'https://agent-state.invalid', revocation: 'revoked' });
    expect(revoke).toHaveBeenCalledWith(expect.objectContaining({ state: 'enrolled' }), KEY_A);
    expect(files(dir)).toEqual([]);
  });

  it('says not enrolled without a record, and wipes an unreadable one without the server', async () => {
    const dir = newDir();
    const state = await openAgentState(dir);
    await expect(state.unenroll(() => Promise.resolve('revoked'))).rejects.toBeInstanceOf(NotEnrolledError);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'enrollment.json'), '[]', { mode: 0o600 });
    writeFileSync(join(dir, 'api-key'), `${KEY_A}\n`, { mode: 0o600 });
    const revoke = vi.fn(() => Promise.resolve('revoked'));
    expect(await state.unenroll(revoke)).toEqual({ serverUrl: null, revocation: null });
    expect(revoke).not.toHaveBeenCalled();
    expect(files(dir)).toEqual([]);
  });

  it('lets one of two concurrent unenrolls revoke and wipe; the other finds nothing to unenroll', async () => {
    const { dir, state } = await enrolled();
    const other = await openAgentState(dir); // another process, or the same one
    const revoke = vi.fn(() => Promise.resolve('revoked'));
    const outcomes = await Promise.allSettled([state.unenroll(revoke), other.unenroll(revoke)]);
    expect(revoke).toHaveBeenCalledTimes(1);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(NotEnrolledError);
    expect(files(dir)).toEqual([]);
  });
});

describe('wipe', () => {
  it('lets concurrent wipes take turns: both succeed, the note is kept once', async () => {
    const { dir, state } = await enrolled();
    const other = await openAgentState(dir);
    await Promise.all([state.wipe(NOTE), other.wipe(NOTE), state.wipe(NOTE)]);
    expect(files(dir)).toEqual(['status.json']);
    expect(await state.status.read()).toEqual(NOTE);
  });

  it('never leaves a key behind an unreadable record: when the key file cannot go, the wipe fails and keeps the record', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'api-key', 'inside'), { recursive: true, mode: 0o700 }); // a key file the store cannot delete
    writeFileSync(join(dir, 'enrollment.json'), '{not json', { mode: 0o600 });
    const state = await openAgentState(dir);
    await expect(state.wipe(NOTE)).rejects.toBeInstanceOf(KeyStoreUnavailableError);
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
    expect(await state.status.read()).toEqual({});

    rmSync(join(dir, 'api-key'), { recursive: true });
    await state.wipe(NOTE);
    expect(files(dir)).toEqual(['status.json']);
  });

  it('removes key, queue, record and temp files; with a note status.json says why, without one it goes', async () => {
    const { dir, state } = await enrolled();
    await state.status.update({ device_id: 'dev_1', queued_results: 2 });
    await (await state.queue()).append(results('Q', 2));
    writeFileSync(join(dir, '.api-key.123.abcd.tmp'), 'torn');
    writeFileSync(join(dir, '.status.json.123.abcd.tmp'), 'not a key file');
    await state.wipe(NOTE);
    expect(files(dir)).toEqual(['.status.json.123.abcd.tmp', 'status.json']);
    expect(await state.status.read()).toEqual(NOTE);
    expect(await state.queuedResults()).toBe(0);

    await state.enroll(plan(), protocol());
    await state.wipe();
    expect(files(dir)).toEqual(['.status.json.123.abcd.tmp']);
  });

  it('keeps the record (wiping, with its note) when the key cannot be deleted, but removes the queue', async () => {
    const { dir, state } = await enrolled();
    await (await state.queue()).append(results('Q', 2));
    rmSync(join(dir, 'api-key')); // replaced by a directory the key store cannot delete
    mkdirSync(join(dir, 'api-key', 'inside'), { recursive: true, mode: 0o700 });
    await expect(state.wipe(NOTE)).rejects.toBeInstanceOf(KeyStoreUnavailableError);
    expect(record(dir)).toMatchObject({ state: 'wiping', wipe_note: NOTE });
    expect(existsSync(join(dir, 'queue'))).toBe(false);
    expect(await state.credentials()).toBeNull(); // never "enrolled" again; the next start retries

    rmSync(join(dir, 'api-key'), { recursive: true });
    await openAgentState(dir); // the next start finishes it, with the note it recorded
    expect(files(dir)).toEqual(['status.json']);
    expect(await state.status.read()).toEqual(NOTE);
  });

  it('does nothing where no state directory exists', async () => {
    const dir = newDir();
    await (await openAgentState(dir)).wipe(NOTE);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('the daemon side', () => {
  it('holds one daemon lock per directory, creating the directory owner-only, and names its holder', async () => {
    const dir = newDir();
    const state = await openAgentState(dir);
    expect(await state.daemonPid()).toBeNull();
    const lock = await state.holdDaemonLock();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(await state.daemonPid()).toBe(process.pid);
    await expect(state.holdDaemonLock()).rejects.toBeInstanceOf(LockHeldError);
    await lock.release();
    expect(await state.daemonPid()).toBeNull();
  });

  it('opens the queue with its options and counts what it holds', async () => {
    const state = await openAgentState(newDir());
    const queue = await state.queue({ maxResults: 3 });
    expect(await queue.append(results('Q', 5))).toEqual({ dropped: 2 });
    expect(await state.queuedResults()).toBe(3);
  });

  it('tells the daemon when the enrollment changes', async () => {
    const dir = newDir();
    const state = await openAgentState(dir);
    mkdirSync(dir, { mode: 0o700 });
    const changed = vi.fn();
    const watch = state.watchEnrollment(changed);
    try {
      await state.enroll(plan(), protocol());
      await vi.waitFor(() => expect(changed).toHaveBeenCalled(), { timeout: 15_000 });
    } finally {
      watch.close();
    }
  });

  it('keeps the policy the server served owner-only, forgets it with null, and wipes it with the key', async () => {
    const { dir, state } = await enrolled();
    expect(await state.serverPolicy()).toBeNull();
    const policy = {
      policy_version: '3.7',
      fetched_at: '2026-05-02T10:00:00.000Z',
      response: { version: 3, policy: { screenLock: { maxIdleSeconds: 300 } }, lifecycle: { version: 7 } },
    };
    await state.storeServerPolicy(policy);
    expect(statSync(join(dir, 'server-policy.json')).mode & 0o777).toBe(0o600);
    expect(await state.serverPolicy()).toEqual(policy);
    await state.storeServerPolicy(null);
    expect(await state.serverPolicy()).toBeNull();
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
    await state.storeServerPolicy(null); // none to forget: no error

    await state.storeServerPolicy(policy);
    await state.wipe(NOTE);
    expect(files(dir)).toEqual(['status.json']);
  });

  it('names the key store an enrollment would use', async () => {
    const state = await openAgentState(newDir());
    expect(await state.prospectiveKeyStore('file')).toBe('file');
    expect(await state.prospectiveKeyStore('keyring')).toBe('keyring');
  });
});

describe('status.json', () => {
  it('reads as empty when it cannot be read or does not hold a status: it is only informative', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'status.json'), { recursive: true, mode: 0o700 });
    const state = await openAgentState(dir);
    expect(await state.status.read()).toEqual({});
    rmSync(join(dir, 'status.json'), { recursive: true });
    writeFileSync(join(dir, 'status.json'), JSON.stringify({ device_id: 'd', queued_results: -1 }), { mode: 0o600 });
    expect(await state.status.read()).toEqual({});
    writeFileSync(join(dir, 'status.json'), JSON.stringify({ device_id: 'd', queued_results: 1 }), { mode: 0o600 });
    expect(await state.status.read()).toEqual({ device_id: 'd', queued_results: 1 });
  });

  it('keeps the last conflict with its message and time, and clears it with null', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    const state = await openAgentState(dir);
    const conflict = { message: "the server refused this device's heartbeat (409)", at: '2026-05-02T10:00:00.000Z' };
    expect(await state.status.update({ device_id: 'd', conflict })).toEqual({ device_id: 'd', conflict });
    expect(await state.status.read()).toEqual({ device_id: 'd', conflict });
    expect(await state.status.update({ conflict: null })).toEqual({ device_id: 'd', conflict: null });
  });

  it('adds increments to counters, ignores zero ones, and writes nothing for an empty change', async () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o700 });
    const state = await openAgentState(dir);
    expect(await state.status.update({}, { dropped_results: 0 })).toEqual({});
    expect(files(dir)).toEqual([]);
    await state.status.update({ device_id: 'd' }, { dropped_results: 2, rejected_results: 0 });
    const other = await openAgentState(dir); // a second writer: another process, or the same one
    await Promise.all([state.status.update({}, { dropped_results: 3 }), other.status.update({}, { dropped_results: 4 })]);
    expect(await state.status.read()).toEqual({ device_id: 'd', dropped_results: 9 });
    await state.status.update({}, { dropped_results: 0, rejected_results: 1 }); // one counter to add is a change
    expect(await state.status.read()).toEqual({ device_id: 'd', dropped_results: 9, rejected_results: 1 });
    await state.status.replace(null);
    await state.status.replace(null);
    expect(files(dir)).toEqual([]);
  });
});

describe('the steps of each transaction', () => {
  it('passes each step in order, with the disk in the state the crash tests expect there', async () => {
    const dir = newDir();
    const seen: string[] = [];
    const state = await openAgentState(dir, {
      afterStep: (step) => {
        seen.push(`${step} ${files(dir).join(',')}`);
      },
    });
    await state.enroll(plan(), protocol());
    await state.status.update({ device_id: 'd' });
    await (await state.queue()).append(results('Q', 1));
    await state.wipe(NOTE);
    await state.enroll(plan(), protocol());
    await state.unenroll(() => Promise.resolve('revoked'));
    // Under the enrollment lock throughout; the old revocation notice goes at enroll:status-cleared.
    expect(seen).toEqual([
      'enroll:recorded enrollment.json,enrollment.lock',
      'enroll:exchanged enrollment.json,enrollment.lock',
      'enroll:key-stored api-key,enrollment.json,enrollment.lock',
      'enroll:status-cleared api-key,enrollment.json,enrollment.lock',
      'wipe:marked api-key,enrollment.json,enrollment.lock,queue,status.json',
      'wipe:key-deleted enrollment.json,enrollment.lock,queue,status.json',
      'wipe:queue-deleted enrollment.json,enrollment.lock,status.json',
      'wipe:status-written enrollment.json,enrollment.lock,status.json',
      'enroll:recorded enrollment.json,enrollment.lock,status.json',
      'enroll:exchanged enrollment.json,enrollment.lock,status.json',
      'enroll:key-stored api-key,enrollment.json,enrollment.lock,status.json',
      'enroll:status-cleared api-key,enrollment.json,enrollment.lock',
      'unenroll:revoked api-key,enrollment.json,enrollment.lock',
      'wipe:marked api-key,enrollment.json,enrollment.lock',
      'wipe:key-deleted enrollment.json,enrollment.lock',
      'wipe:queue-deleted enrollment.json,enrollment.lock',
      'wipe:status-written enrollment.json,enrollment.lock',
    ]);
  });
});

describe('what a cut-short wipe leaves', () => {
  const interruptAt = (step: string) => ({
    afterStep: (reached: string) => {
      if (reached === step) throw new Error(`interrupted after ${step}`);
    },
  });

  it('marks the record wiping with the note before deleting anything, and the next wipe keeps that note', async () => {
    const { dir } = await enrolled();
    const interrupted = await openAgentState(dir, interruptAt('wipe:marked'));
    await expect(interrupted.wipe(NOTE)).rejects.toThrow('interrupted after wipe:marked');
    expect(record(dir)).toMatchObject({ state: 'wiping', wipe_note: NOTE });
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
    const state = await openAgentState(dir, { deferRecovery: true });
    await state.wipe();
    expect(await state.status.read()).toEqual(NOTE);
  });

  it('marks an enrollment in progress as enrolling before the token is spent', async () => {
    const dir = newDir();
    const exchange = protocol();
    const interrupted = await openAgentState(dir, interruptAt('enroll:recorded'));
    await expect(interrupted.enroll(plan(), exchange)).rejects.toThrow('interrupted after enroll:recorded');
    expect(record(dir).state).toBe('enrolling');
    expect(exchange.exchange).not.toHaveBeenCalled();
  });

  it('fails to open, rather than leave a cut-short operation, when the enrollment lock cannot be read', async () => {
    const { dir } = await enrolled();
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'enrolling' }));
    mkdirSync(join(dir, 'enrollment.lock'), { mode: 0o700 }); // not a lock: neither a link nor a file
    await expect(openAgentState(dir)).rejects.toThrow(/EISDIR/);
    expect(record(dir).state).toBe('enrolling');
  });

  it('leaves a record already wiping with a note as it is: the mark is written once', async () => {
    const { dir } = await enrolled();
    const first = { ...NOTE, revoked_at: '2026-05-01T09:00:00.000Z' };
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'wiping', wipe_note: first }));
    const interrupted = await openAgentState(dir, { deferRecovery: true, ...interruptAt('wipe:marked') });
    await expect(interrupted.wipe(NOTE)).rejects.toThrow('interrupted');
    expect(record(dir)).toMatchObject({ state: 'wiping', wipe_note: first });
  });

  it('adds a note to a record already wiping without one', async () => {
    const { dir } = await enrolled();
    writeFileSync(join(dir, 'enrollment.json'), JSON.stringify({ ...record(dir), state: 'wiping' }));
    const interrupted = await openAgentState(dir, { deferRecovery: true, ...interruptAt('wipe:marked') });
    await expect(interrupted.wipe(NOTE)).rejects.toThrow('interrupted');
    expect(record(dir)).toMatchObject({ state: 'wiping', wipe_note: NOTE });
  });

  it('never finishes anything in a directory that is enrolled', async () => {
    const { dir } = await enrolled();
    const state = await openAgentState(dir);
    expect(await state.credentials()).toMatchObject({ apiKey: KEY_A });
    expect(files(dir)).toEqual(['api-key', 'enrollment.json']);
  });

  it('says why it refuses: already enrolled, not enrolled', async () => {
    const { dir, state } = await enrolled();
    await expect(state.enroll(plan(), protocol())).rejects.toThrow(
      `this device is already enrolled with https://agent-state.invalid (state directory ${dir}): run \`device-agent unenroll\` first, or pass --force to unenroll and enroll again`,
    );
    await state.unenroll(() => Promise.resolve('revoked'));
    await expect(state.unenroll(() => Promise.resolve('revoked'))).rejects.toThrow(`this device is not enrolled (state directory ${dir})`);
  });
});
