// The one executor behind `install` and `uninstall`, on real files and real child processes in a
// temporary directory: modes whatever the umask, no temp files left, copies beside then renamed,
// failures that may happen and those that stop the plan.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executePlan, PlanStepError } from '../../src/service/executor';
import type { Plan, PlanStep } from '../../src/service/plan';

const work = mkdtempSync(join(tmpdir(), 'device-agent-executor-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function plan(steps: PlanStep[]): Plan {
  return { action: 'install', platform: 'linux', style: 'posix', steps, notes: [] };
}

function run(steps: PlanStep[]) {
  const lines: string[] = [];
  const hooks = {
    enroll: () => Promise.resolve('enrolled'),
    unenroll: () => Promise.resolve('unenrolled'),
    report: (line: string) => lines.push(line),
  };
  return { lines, done: executePlan(plan(steps), hooks) };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('executePlan', () => {
  it('writes, copies, links and creates with the modes asked for, whatever the umask', async () => {
    const root = join(work, 'install');
    const source = join(work, 'program');
    writeFileSync(source, 'binary');
    const previous = process.umask(0o077);
    try {
      const { lines, done } = run([
        { kind: 'mkdir', path: join(root, 'state'), mode: 0o700 },
        { kind: 'mkdir', path: join(root, 'lib'), mode: 0o755 },
        { kind: 'copy', from: source, to: join(root, 'lib', 'device-agent'), mode: 0o755 },
        { kind: 'symlink', path: join(root, 'bin', 'device-agent'), target: join(root, 'lib', 'device-agent') },
        { kind: 'write', path: join(root, 'etc', 'unit.service'), content: '[Unit]\n', mode: 0o644 },
      ]);
      await done;
      expect(lines).toEqual([
        `created ${join(root, 'state')}`,
        `created ${join(root, 'lib')}`,
        `installed ${join(root, 'lib', 'device-agent')}`,
        `linked ${join(root, 'bin', 'device-agent')} -> ${join(root, 'lib', 'device-agent')}`,
        `wrote ${join(root, 'etc', 'unit.service')}`,
      ]);
    } finally {
      process.umask(previous);
    }
    expect(mode(join(root, 'state'))).toBe(0o700);
    expect(mode(join(root, 'lib', 'device-agent'))).toBe(0o755);
    expect(mode(join(root, 'etc', 'unit.service'))).toBe(0o644);
    expect(readFileSync(join(root, 'lib', 'device-agent'), 'utf8')).toBe('binary');
    expect(readlinkSync(join(root, 'bin', 'device-agent'))).toBe(join(root, 'lib', 'device-agent'));
    expect(readdirSync(join(root, 'lib'))).toEqual(['device-agent']);
    expect(readdirSync(join(root, 'etc'))).toEqual(['unit.service']);
  });

  it('replaces a file by rename (a running program keeps its inode) and keeps a copy onto itself', async () => {
    const dir = join(work, 'replace');
    mkdirSync(dir);
    const target = join(dir, 'device-agent');
    writeFileSync(target, 'old');
    const before = lstatSync(target).ino;
    writeFileSync(join(dir, 'new'), 'new');
    const { lines, done } = run([
      { kind: 'copy', from: join(dir, 'new'), to: target, mode: 0o755 },
      { kind: 'copy', from: target, to: target, mode: 0o755 },
    ]);
    await done;
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(lstatSync(target).ino).not.toBe(before);
    expect(lines[1]).toBe(`kept ${target} (already in place)`);
  });

  it('removes what is there and says what was not; a failing command that may fail is a warning', async () => {
    const dir = join(work, 'remove');
    mkdirSync(join(dir, 'state', 'queue'), { recursive: true });
    writeFileSync(join(dir, 'state', 'queue', 'segment'), 'x');
    const { lines, done } = run([
      { kind: 'run', argv: ['false'], mayFail: true },
      { kind: 'remove', path: join(dir, 'state'), recursive: true },
      { kind: 'remove', path: join(dir, 'absent.service') },
      { kind: 'unenroll', stateDir: join(dir, 'state') },
    ]);
    const result = await done;
    expect(result.removed).toEqual([join(dir, 'state')]);
    expect(result.warnings).toEqual(['false failed (exit 1): no message']);
    expect(lines).toEqual([
      'false failed (exit 1): no message (not fatal)',
      `removed ${join(dir, 'state')}`,
      `${join(dir, 'absent.service')} was not there`,
      'unenrolled',
    ]);
  });

  it('stops at a command that must succeed, with its message; later steps do not run', async () => {
    const after = join(work, 'never-written');
    const { done } = run([
      { kind: 'run', argv: ['sh', '-c', 'echo "unit not found" >&2; exit 5'] },
      { kind: 'write', path: after, content: 'x', mode: 0o644 },
    ]);
    await expect(done).rejects.toThrow(new PlanStepError('sh -c \'echo "unit not found" >&2; exit 5\' failed (exit 5): unit not found'));
    expect(() => statSync(after)).toThrow();
  });

  it("runs commands from the system directories only, not from the caller's PATH", async () => {
    const bin = join(work, 'evil-bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'device-agent-test-tool'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const previous = process.env.PATH;
    process.env.PATH = `${bin}:${previous}`;
    try {
      const { done } = run([{ kind: 'run', argv: ['device-agent-test-tool'], mayFail: true }]);
      expect((await done).warnings[0]).toMatch(/^device-agent-test-tool failed \(it did not run\)/);
    } finally {
      process.env.PATH = previous;
    }
  });

  it('a file step that cannot be done is reported with the step', async () => {
    const blocker = join(work, 'blocker');
    writeFileSync(blocker, 'a file where a directory should be');
    const { done } = run([{ kind: 'write', path: join(blocker, 'unit.service'), content: 'x', mode: 0o644 }]);
    await expect(done).rejects.toThrow(/^could not write .*blocker\/unit\.service \(mode 0644\): /);
  });
});
