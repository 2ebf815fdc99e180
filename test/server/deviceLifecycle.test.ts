// The device lifecycle (src/server/deviceLifecycle.ts): its rules as pure functions, the HTTP answer
// of each refusal, and the whole lifecycle on a real SQLite store (deviceLifecycleSuite.ts; the same
// suite runs on PostgreSQL in postgres/deviceLifecycle.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openStore } from '../../src/server/db/open';
import type { EnrollmentFacts, NewPostureResult, PostureFacts, Store } from '../../src/server/db/store';
import { CHECK_KEYS } from '../../src/protocol/constants';
import {
  decidePostures,
  enroll,
  failStanding,
  graceCutoffs,
  firstKeyBeyondCap,
  graceEndsAt,
  graceSecondsFor,
  mayEnroll,
  needsCheckKeys,
  refusalError,
  reportIdsToCheck,
  type Refusal,
} from '../../src/server/deviceLifecycle';
import { lifecycleOnStore, newResult } from './deviceLifecycleSuite';
import type { OrganizationId } from '../../src/server/ids';

const NOW = '2026-11-25T12:00:00.000Z';
const REPORT = 'rpt_0123456789abcdef0123456789abcdef';
const OTHER_REPORT = 'rpt_fedcba9876543210fedcba9876543210';
/** Room for the nine official check keys and two others. */
const CAP = 11;

describe('refusalError: the agent API answer of each refusal', () => {
  const answers: [Refusal, number, string, RegExp, boolean][] = [
    [{ kind: 'token_refused' }, 401, 'unauthorized', /^the enrollment token is unknown, already used or expired$/, false],
    [{ kind: 'revoked' }, 401, 'unauthorized', /^the API key is not valid: unknown, revoked or unenrolled$/, true],
    [{ kind: 'hardware_uuid_taken' }, 409, 'conflict', /^the hardware_uuid is already used by another device of this organization$/, false],
    [{ kind: 'not_active' }, 401, 'unauthorized', /^the device has not completed a heartbeat yet \(or was revoked\)$/, true],
    [
      { kind: 'invalid_correlation_id', index: 7 },
      400,
      'bad_request',
      /^results\[7\]\.correlation_id is not a posture report of this organization$/,
      false,
    ],
    [{ kind: 'secret_refused' }, 401, 'unauthorized', /^the enrollment secret is not valid$/, false],
    [
      { kind: 'check_key_cap', index: 3, cap: 64 },
      400,
      'bad_request',
      /^results\[3\]\.check_key is a new check key beyond this device's cap of 64 distinct check keys \(the nine official ones and 55 others\)$/,
      false,
    ],
  ];
  test.each(answers)('%o → %i %s', (refusal, status, code, message, challenges) => {
    const error = refusalError(refusal);
    expect([error.statusCode, error.code]).toEqual([status, code]);
    expect(error.message).toMatch(message);
    // A 401 on a route authenticated by the API key challenges for it; the enrollment token is sent in the body.
    expect(error.headers).toEqual(challenges ? { 'www-authenticate': 'Bearer' } : {});
  });
});

describe('mayEnroll: a consumed token gives its device a key', () => {
  const enrollable: EnrollmentFacts = { tokenExpiresAt: '2026-11-25T12:00:00.001Z', state: 'PENDING', hasApiKey: false };

  test('while the token is unexpired and its device PENDING without a key', () => {
    expect(mayEnroll(enrollable, NOW)).toBe(true);
  });

  test('not from the moment it expires', () => {
    expect(mayEnroll({ ...enrollable, tokenExpiresAt: NOW }, NOW)).toBe(false);
    expect(mayEnroll({ ...enrollable, tokenExpiresAt: '2026-11-25T11:00:00.000Z' }, NOW)).toBe(false);
    // Compared as times, not as text.
    expect(mayEnroll({ ...enrollable, tokenExpiresAt: '2026-11-25T12:00:00.5Z' }, NOW)).toBe(true);
  });

  test('not to a device that is ACTIVE, REVOKED, or already has a key', () => {
    expect(mayEnroll({ ...enrollable, state: 'ACTIVE' }, NOW)).toBe(false);
    expect(mayEnroll({ ...enrollable, state: 'REVOKED' }, NOW)).toBe(false);
    expect(mayEnroll({ ...enrollable, hasApiKey: true }, NOW)).toBe(false);
  });
});

describe('reportIdsToCheck: what the store is asked about', () => {
  test('each distinct correlation id that is a posture report id, in order; nothing else reaches the database', () => {
    const results: NewPostureResult[] = [
      newResult({ correlationId: OTHER_REPORT }),
      newResult(),
      newResult({ correlationId: REPORT }),
      newResult({ correlationId: OTHER_REPORT }),
      newResult({ correlationId: 'dev_0123456789abcdef0123456789abcdef' }),
      newResult({ correlationId: REPORT.toUpperCase() }),
      newResult({ correlationId: `${REPORT}\u0000` }),
    ];
    expect(reportIdsToCheck(results)).toEqual([OTHER_REPORT, REPORT]);
    expect(reportIdsToCheck([newResult()])).toEqual([]);
  });
});

describe('decidePostures: what an upload stores', () => {
  const active = (...own: string[]): PostureFacts => ({ state: 'ACTIVE', ownReports: new Set(own), checkKeys: new Set() });

  test('nothing from a device that is not ACTIVE (or not there), before any correlation id is looked at', () => {
    for (const state of ['PENDING', 'REVOKED', undefined] as const) {
      expect(decidePostures({ state, ownReports: new Set(), checkKeys: new Set() }, [newResult({ correlationId: 'bad' })], CAP)).toEqual({
        refuse: { kind: 'not_active' },
      });
    }
  });

  /** Each result's status run (src/server/statusSince.ts, tested there): here each check's only result. */
  const opens = (at: string) => ({ runStartedAt: at, runOpensUpload: true });

  test('results without a correlation id share one new report; named ones keep theirs', () => {
    const results = [
      newResult({ checkKey: 'A', status: 'PASS', evidence: null, observedAt: '2026-11-25T11:00:00.000Z' }),
      newResult({ checkKey: 'B', status: 'FAIL', correlationId: REPORT }),
      newResult({ checkKey: 'C', status: 'UNKNOWN', evidence: { reason: 'x' } }),
    ];
    // Three keys other than the official ones: one more than CAP leaves room for.
    const decision = decidePostures(active(REPORT), results, CAP + 1);
    if (!('write' in decision)) throw new Error('refused');
    const created = decision.write.newReport;
    expect(created).toMatch(/^rpt_[0-9a-f]{32}$/);
    expect(created).not.toBe(REPORT);
    expect(decision.write.results).toEqual([
      {
        reportId: created,
        checkKey: 'A',
        status: 'PASS',
        evidence: null,
        observedAt: '2026-11-25T11:00:00.000Z',
        ...opens('2026-11-25T11:00:00.000Z'),
      },
      {
        reportId: REPORT,
        checkKey: 'B',
        status: 'FAIL',
        evidence: { enabled: true },
        observedAt: newResult().observedAt,
        ...opens(newResult().observedAt),
      },
      {
        reportId: created,
        checkKey: 'C',
        status: 'UNKNOWN',
        evidence: { reason: 'x' },
        observedAt: newResult().observedAt,
        ...opens(newResult().observedAt),
      },
    ]);
    // A new report each time.
    const again = decidePostures(active(REPORT), results, CAP + 1);
    expect('write' in again && again.write.newReport).not.toBe(created);
  });

  test('no new report when every result names one, nor for an empty batch', () => {
    expect(decidePostures(active(REPORT), [newResult({ correlationId: REPORT })], CAP)).toEqual({
      write: {
        newReport: null,
        results: [
          {
            reportId: REPORT,
            checkKey: 'FIREWALL_ENABLED',
            status: 'PASS',
            evidence: { enabled: true },
            observedAt: newResult().observedAt,
            ...opens(newResult().observedAt),
          },
        ],
      },
    });
    expect(decidePostures(active(), [], CAP)).toEqual({ write: { newReport: null, results: [] } });
  });

  test('a correlation id outside the organization refuses the batch, naming the first such result', () => {
    const results = [
      newResult({ correlationId: REPORT }),
      newResult(),
      newResult({ correlationId: OTHER_REPORT }),
      newResult({ correlationId: 'x' }),
    ];
    expect(decidePostures(active(REPORT), results, CAP)).toEqual({ refuse: { kind: 'invalid_correlation_id', index: 2 } });
    expect(decidePostures(active(), results, CAP)).toEqual({ refuse: { kind: 'invalid_correlation_id', index: 0 } });
    expect(decidePostures(active(REPORT, OTHER_REPORT), results, CAP)).toEqual({ refuse: { kind: 'invalid_correlation_id', index: 3 } });
  });

  test('a new check key beyond the cap refuses the batch, naming the first such result; after the correlation ids', () => {
    const held = (...keys: string[]): PostureFacts => ({ state: 'ACTIVE', ownReports: new Set([REPORT]), checkKeys: new Set(keys) });
    const results = [newResult({ checkKey: 'CUSTOM_A' }), newResult({ checkKey: 'CUSTOM_B' }), newResult({ checkKey: 'CUSTOM_C' })];
    expect(decidePostures(held(), results, CAP)).toEqual({ refuse: { kind: 'check_key_cap', index: 2, cap: CAP } });
    expect(decidePostures(held(), results.slice(0, 2), CAP)).toHaveProperty('write');
    expect(decidePostures(held(), results, CAP + 1)).toHaveProperty('write');
    const late = [...results, newResult({ correlationId: OTHER_REPORT })];
    expect(decidePostures(held(), late, CAP)).toEqual({ refuse: { kind: 'invalid_correlation_id', index: 3 } });
  });
});

describe('firstKeyBeyondCap: the distinct check keys a device may hold', () => {
  const keys = (...names: string[]) => names.map((checkKey) => newResult({ checkKey }));

  test('the official keys are always accepted and keep their places: cap − 9 others', () => {
    expect(firstKeyBeyondCap(new Set(), keys(...CHECK_KEYS, 'A', 'B', 'C'), CAP)).toBe(11);
    // Held custom keys use the allowance even before the official ones arrive.
    expect(firstKeyBeyondCap(new Set(['A', 'B']), keys(...CHECK_KEYS), CAP)).toBe(-1);
    expect(firstKeyBeyondCap(new Set(['A', 'B']), keys(...CHECK_KEYS, 'C'), CAP)).toBe(9);
    expect(firstKeyBeyondCap(new Set(CHECK_KEYS), keys('A', 'B', 'C'), CAP)).toBe(2);
    expect(firstKeyBeyondCap(new Set(), keys('A'), CHECK_KEYS.length)).toBe(0);
  });

  test('a key the device holds, or one already counted in the batch, takes no new place', () => {
    expect(firstKeyBeyondCap(new Set(['A', 'B']), keys('B', 'A', 'A'), CAP)).toBe(-1);
    expect(firstKeyBeyondCap(new Set(['A']), keys('B', 'B', 'A', 'B', 'C'), CAP)).toBe(4);
    expect(firstKeyBeyondCap(new Set(), keys('A', 'A', 'B', 'B', 'C'), CAP)).toBe(4);
  });

  test('only keys other than the official ones need the store to read the device keys', () => {
    expect(needsCheckKeys(keys(...CHECK_KEYS))).toBe(false);
    expect(needsCheckKeys(keys())).toBe(false);
    expect(needsCheckKeys(keys('DISK_ENCRYPTION', 'disk_encryption'))).toBe(true);
  });
});

let dir: string;
let store: Store;

test('a token that is not a credential is refused without a transaction', async () => {
  let exchanges = 0;
  const counting = Object.create(store) as Store;
  counting.exchangeToken = (...args) => {
    exchanges += 1;
    return store.exchangeToken(...args);
  };
  for (const token of ['', 'not-a-token', `${'a'.repeat(96)} `, 'a'.repeat(95), 'g'.repeat(96)]) {
    expect(await enroll(counting, token, NOW)).toEqual({ kind: 'token_refused' });
  }
  expect(exchanges).toBe(0);
  // Hex in either case is a credential (and the same one): it is looked up.
  expect(await enroll(counting, 'A'.repeat(96), NOW)).toEqual({ kind: 'token_refused' });
  expect(exchanges).toBe(1);
});

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'device-agent-lifecycle-'));
  store = await openStore({ engine: 'sqlite', path: join(dir, 'server.db') });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

lifecycleOnStore('SQLite', () => store);

describe('grace periods: when a FAIL counts as failing', () => {
  const began = '2026-11-27T10:00:00.000Z';
  const at = (iso: string) => new Date(iso);

  test("a check's own grace wins over the policy's, which holds for every other check, zero included", () => {
    const settings = { graceSeconds: 600, graceSecondsByCheck: { DISK_ENCRYPTION: 0, FIREWALL_ENABLED: 3600 } };
    expect(graceSecondsFor(settings, 'FIREWALL_ENABLED')).toBe(3600);
    expect(graceSecondsFor(settings, 'DISK_ENCRYPTION')).toBe(0);
    expect(graceSecondsFor(settings, 'TIME_SYNC')).toBe(600);
  });

  test('the grace ends graceSeconds after the FAIL began; an unreadable beginning has no end', () => {
    expect(graceEndsAt(began, 90)).toBe(Date.parse(began) + 90_000);
    expect(graceEndsAt(began, 0)).toBe(Date.parse(began));
    expect(graceEndsAt(null, 90)).toBeUndefined();
    expect(graceEndsAt('not a time', 90)).toBeUndefined();
  });

  test('a FAIL is in grace until the very millisecond its grace ends, then failing; other statuses are not failing', () => {
    expect(failStanding('FAIL', began, 60, at('2026-11-27T10:00:59.999Z'))).toBe('in_grace');
    expect(failStanding('FAIL', began, 60, at('2026-11-27T10:01:00.000Z'))).toBe('failing');
    expect(failStanding('FAIL', began, 0, at(began))).toBe('failing');
    for (const status of ['PASS', 'UNKNOWN', 'NOT_APPLICABLE']) expect(failStanding(status, began, 60, at(began))).toBe('not_failing');
  });

  test('a FAIL whose beginning cannot be read counts as failing: a grace is never guessed', () => {
    expect(failStanding('FAIL', null, 3600, at(began))).toBe('failing');
    expect(failStanding('FAIL', 'garbled', 3600, at(began))).toBe('failing');
  });

  test('without a grace, a FAIL dated ahead of the server (its agent’s clock is fast) fails at once', () => {
    expect(failStanding('FAIL', '2026-11-27T11:00:00.000+01:00', 0, at('2026-11-27T09:59:00.000Z'))).toBe('failing');
    expect(failStanding('FAIL', '2026-11-27T11:00:00.000+01:00', 1, at('2026-11-27T09:59:00.000Z'))).toBe('in_grace');
  });

  test("the rule's form for SQL: per check, the time a FAIL must have begun after to be in grace; none without a grace", () => {
    const orgId = 'org_00000000000000000000000000000001' as OrganizationId;
    const settings = { graceSeconds: 600, graceSecondsByCheck: { DISK_ENCRYPTION: 0, FIREWALL_ENABLED: 3600 } };
    expect(graceCutoffs(orgId, settings, at('2026-11-27T10:00:00.000Z'))).toEqual({
      orgId,
      byCheck: [
        ['DISK_ENCRYPTION', null],
        ['FIREWALL_ENABLED', '2026-11-27T09:00:00.000Z'],
      ],
      otherwise: '2026-11-27T09:50:00.000Z',
    });
    expect(graceCutoffs(orgId, { graceSeconds: 0, graceSecondsByCheck: {} }, at(began))).toEqual({ orgId, byCheck: [], otherwise: null });
  });
});
