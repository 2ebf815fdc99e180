// The posture policy: documented defaults, partial overrides from a JSON file, precise errors.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, loadPolicyFile, PolicyError, resolvePolicy } from '../../checks/policy';

const dir = mkdtempSync(path.join(tmpdir(), 'policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('default policy', () => {
  it('has the documented defaults (docs/checks.md#policy)', () => {
    expect(DEFAULT_POLICY.screenLock).toEqual({ maxIdleSeconds: 900, maxGraceSeconds: 5 });
    expect(DEFAULT_POLICY.password).toEqual({ minLength: 8, requireComplexity: false });
    expect(DEFAULT_POLICY.timeSync).toEqual({ maxOffsetSeconds: null });
    expect(DEFAULT_POLICY.diskEncryption).toEqual({ scope: 'root', inProgress: 'FAIL', failUnencryptedSwap: false });
    expect(DEFAULT_POLICY.autoUpdate).toEqual({ acceptDownloadOnly: false, maxPendingDays: 45 });
    expect(DEFAULT_POLICY.malware).toEqual({
      requiredAgents: { LINUX: [], FREEBSD: [], DARWIN: [] },
      maxSignatureAgeDays: 7,
      xprotectMaxAgeDays: 30,
    });
    expect(DEFAULT_POLICY.containers).toEqual({ mode: 'UNKNOWN' });
    expect(DEFAULT_POLICY.remoteLogin).toEqual({ allowSshIfHardened: false });
    const os = DEFAULT_POLICY.osVersion;
    expect(os.acceptExtendedSupport).toEqual({ debianLts: false, ubuntuEsm: false, rhelEls: false, suseLtss: false, windowsEsu: false });
    expect(os).toMatchObject({ graceDaysAfterEol: 0, maxPatchLagDays: null, unknownRelease: 'UNKNOWN', rollingMaxAgeDays: 90 });
    expect(os.minimum).toEqual({ DARWIN: '14.0', WINDOWS: { minBuild: 19045, minServerBuild: 14393 }, LINUX: {}, FREEBSD: '14.0' });
    // No override: each platform judges by its own built-in table (checks/<os>/lifecycle.ts), loaded only with its checks.
    expect(os.lifecycle).toBeUndefined();
  });
});

describe('docs/checks.md#policy', () => {
  const section = readFileSync(new URL('../../docs/checks.md', import.meta.url), 'utf8')
    .split('\n## Policy\n')[1]!
    .split('\n## ')[0]!;

  it('shows the defaults exactly as DEFAULT_POLICY has them', () => {
    const documented: unknown = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!);
    const { lifecycle, ...osVersion } = DEFAULT_POLICY.osVersion;
    expect(lifecycle).toBeUndefined();
    expect(documented).toEqual({
      ...DEFAULT_POLICY,
      osVersion: { ...osVersion, lifecycle: '(the built-in table of checks/<os>/lifecycle.ts)' },
    });
  });

  it('has a table row for every knob', () => {
    // First cells: "`a.b.c`", or "`a.b.c` / `.d`" for a sibling; a row for an object covers its fields.
    const documented = [...section.matchAll(/^\| (`[^|]+) \|/gm)].flatMap((m) => {
      const names = [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!);
      return names.map((name) => (name.startsWith('.') ? names[0]!.replace(/\.[^.]+$/, name) : name));
    });
    const leaves = (value: unknown, path: string): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value) && path !== 'osVersion.lifecycle'
        ? Object.entries(value).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k))
        : [path];
    for (const knob of leaves(DEFAULT_POLICY, '')) {
      expect(
        documented.some((row) => knob === row || knob.startsWith(`${row}.`)),
        knob,
      ).toBe(true);
    }
  });
});

describe('policy overrides', () => {
  it('fills what an override leaves out from the defaults', () => {
    const policy = resolvePolicy({ password: { minLength: 12 }, osVersion: { minimum: { LINUX: { ubuntu: '22.04' } } } });
    expect(policy.password).toEqual({ minLength: 12, requireComplexity: false });
    expect(policy.osVersion.minimum.LINUX).toEqual({ ubuntu: '22.04' });
    expect(policy.osVersion.minimum.DARWIN).toBe('14.0');
    expect(policy.screenLock).toEqual(DEFAULT_POLICY.screenLock);
  });

  it('keeps the other Windows floor when an override sets one', () => {
    expect(resolvePolicy({ osVersion: { minimum: { WINDOWS: { minBuild: 22631 } } } }).osVersion.minimum.WINDOWS).toEqual({
      minBuild: 22631,
      minServerBuild: 14393,
    });
    expect(resolvePolicy({ osVersion: { minimum: { WINDOWS: { minServerBuild: 20348 } } } }).osVersion.minimum.WINDOWS).toEqual({
      minBuild: 19045,
      minServerBuild: 20348,
    });
  });

  it("loads an administrator's JSON file", () => {
    const policy = loadPolicyFile(
      file('ok.json', JSON.stringify({ containers: { mode: 'NOT_APPLICABLE' }, malware: { requiredAgents: { LINUX: ['clamav'] } } })),
    );
    expect(policy.containers.mode).toBe('NOT_APPLICABLE');
    expect(policy.malware.requiredAgents).toEqual({ LINUX: ['clamav'], FREEBSD: [], DARWIN: [] });
  });

  it('replaces the lifecycle table as a whole when the file gives one', () => {
    const policy = loadPolicyFile(
      file('lc.json', JSON.stringify({ osVersion: { lifecycle: { debian: [{ cycle: '12', eol: '2030-01-01' }] } } })),
    );
    expect(policy.osVersion.lifecycle).toEqual({ debian: [{ cycle: '12', eol: '2030-01-01' }] });
  });

  it('rejects a missing file, bad JSON and invalid values with a precise message', () => {
    expect(() => loadPolicyFile(path.join(dir, 'absent.json'))).toThrow(
      new PolicyError(`cannot read policy file ${path.join(dir, 'absent.json')}: ENOENT`),
    );
    expect(() => loadPolicyFile(file('bad.json', '{ "password": '))).toThrow(/is not valid JSON/);
    expect(() => loadPolicyFile(file('neg.json', '{"password":{"minLength":-1}}'))).toThrow(/invalid policy at password\.minLength/);
    expect(() => loadPolicyFile(file('mode.json', '{"containers":{"mode":"PASS"}}'))).toThrow(/invalid policy at containers\.mode/);
    expect(() => loadPolicyFile(file('date.json', '{"osVersion":{"lifecycle":{"x":[{"cycle":"1","eol":"soon"}]}}}'))).toThrow(PolicyError);
  });

  // The agent bundles zod/mini, which has no messages of its own ("Invalid input" for everything):
  // the policy's author still reads what is wrong, in zod's English words.
  it.each([
    ['{"password":{"minLength":-1}}', 'password.minLength: Too small: expected number to be >0'],
    ['{"screenLock":{"maxIdleSeconds":"600"}}', 'screenLock.maxIdleSeconds: Invalid input: expected number, received string'],
    ['{"screenLock":{"maxIdleSeconds":1.5}}', 'screenLock.maxIdleSeconds: Invalid input: expected int, received number'],
    ['{"containers":{"mode":"PASS"}}', 'containers.mode: Invalid option: expected one of "UNKNOWN"|"NOT_APPLICABLE"'],
    ['{"malware":{"requiredAgents":{"LINUX":[""]}}}', 'malware.requiredAgents.LINUX.0: Too small: expected string to have >=1 characters'],
    // macOS takes only the products whose own health report the agent reads.
    [
      '{"malware":{"requiredAgents":{"DARWIN":["clamav"]}}}',
      'malware.requiredAgents.DARWIN.0: Invalid option: expected one of "microsoft-defender"|"falcon-sensor"|"sentinelone"|"mdatp"|"crowdstrike"',
    ],
    [
      '{"osVersion":{"lifecycle":{"x":[{"cycle":"1","eol":false,"releaseDate":"2024-1-1"}]}}}',
      'osVersion.lifecycle.x.0.releaseDate: must be YYYY-MM-DD',
    ],
  ])('explains %s', (json, message) => {
    expect(() => loadPolicyFile(file('explained.json', json))).toThrow(new PolicyError(`invalid policy at ${message}`));
  });
});
