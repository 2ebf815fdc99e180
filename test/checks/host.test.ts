// The real command runner and file access of checks/host.ts, on real processes and files.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSystemHost, MAX_FILE_BYTES, MAX_OUTPUT_BYTES, runCommand } from '../../checks/host';

const dir = mkdtempSync(path.join(tmpdir(), 'checks-host-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Gone, or a zombie waiting for a reaper: either way no longer running. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('runCommand', () => {
  it('refuses a command that is not an absolute path', () => {
    expect(() => runCommand('echo', ['x'])).toThrow(/absolute path/);
    expect(() => runCommand('./bin/echo', ['x'])).toThrow(/absolute path/);
  });

  it('passes arguments literally: no shell interprets them', async () => {
    const marker = path.join(dir, 'injected');
    const result = await runCommand('/bin/echo', [`a; touch ${marker}`, '$(id -u)', '`id`', '*']);
    expect(result).toEqual({ exitCode: 0, stdout: `a; touch ${marker} $(id -u) \`id\` *\n`, stderr: '' });
    expect(existsSync(marker)).toBe(false);
  });

  it('runs with a scrubbed environment that has LC_ALL=C, plus what the caller adds', async () => {
    process.env.CHECKS_HOST_TEST_SECRET = 'must-not-leak';
    try {
      const result = await runCommand('/usr/bin/env', [], { env: { EXTRA: 'yes' } });
      const env = Object.fromEntries(
        result.stdout
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(env).toMatchObject({ LC_ALL: 'C', LANG: 'C', EXTRA: 'yes' });
      expect(env.PATH).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
      expect(env.CHECKS_HOST_TEST_SECRET).toBeUndefined();
      expect(env.HOME).toBeUndefined();
    } finally {
      delete process.env.CHECKS_HOST_TEST_SECRET;
    }
  });

  it('keeps stdout, stderr and the exit code apart', async () => {
    const result = await runCommand('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('reports a missing binary as not_found', async () => {
    const result = await runCommand('/usr/bin/definitely-not-installed-here', ['--version']);
    expect(result).toEqual({ exitCode: null, stdout: '', stderr: '', error: 'not_found' });
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const started = Date.now();
    // The shell prints its background child's pid, then waits for it.
    const result = await runCommand('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], { timeoutMs: 300 });
    expect(result.error).toBe('timeout');
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
    const grandchild = Number(result.stdout.trim());
    expect(grandchild).toBeGreaterThan(1);
    for (let i = 0; i < 50 && running(grandchild); i++) await new Promise((r) => setTimeout(r, 20));
    expect(running(grandchild)).toBe(false);
  });

  it('stops a command whose output exceeds the cap', async () => {
    const started = Date.now();
    const result = await runCommand('/usr/bin/yes', []);
    expect(result.error).toBe('output_too_large');
    expect(result.stdout.length).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('writes input to standard input', async () => {
    expect((await runCommand('/bin/cat', [], { input: 'hello\n' })).stdout).toBe('hello\n');
  });

  it.skipIf(process.getuid?.() !== 0)("runs in another user's context when asked (root only)", async () => {
    const result = await runCommand('/usr/bin/id', ['-u'], { user: { uid: 65534, gid: 65534 } });
    expect(result.stdout.trim()).toBe('65534');
  });
});

describe('createSystemHost file access', () => {
  const host = createSystemHost();

  it('reads files, refuses ones above the cap, and reports missing ones', async () => {
    const small = path.join(dir, 'small');
    const big = path.join(dir, 'big');
    writeFileSync(small, 'content\n');
    writeFileSync(big, Buffer.alloc(MAX_FILE_BYTES + 10, 0x61));
    expect(await host.readFile(small)).toEqual({ ok: true, text: 'content\n' });
    expect(await host.readFile(big)).toEqual({ ok: false, error: 'too_large' });
    expect(await host.readFile(path.join(dir, 'absent'))).toEqual({ ok: false, error: 'not_found' });
  });

  it("reads only a file's start when bounded: a file above the cap is no error then", async () => {
    const big = path.join(dir, 'big-head');
    const text = Array.from({ length: MAX_FILE_BYTES + 10 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    writeFileSync(big, text);
    for (const maxBytes of [0, 1, 511, 512, 513, 4096, 512 + 16384 + 1]) {
      expect(await host.readFile(big, { maxBytes }), `${maxBytes} bytes`).toEqual({ ok: true, text: text.slice(0, maxBytes) });
    }
    const small = path.join(dir, 'small-head');
    writeFileSync(small, 'Origin: Debian\n');
    expect(await host.readFile(small, { maxBytes: 4096 })).toEqual({ ok: true, text: 'Origin: Debian\n' });
  });

  it('reads a file longer than one read, and concurrent reads each their own file', async () => {
    const long = path.join(dir, 'long');
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i} é\n`).join(''); // > 16 KiB, multi-byte characters
    writeFileSync(long, text);
    const files = Array.from({ length: 20 }, (_, i) => path.join(dir, `concurrent-${i}`));
    files.forEach((file, i) => writeFileSync(file, `${i}\n`.repeat(i + 1)));
    const [longRead, ...reads] = await Promise.all([host.readFile(long), ...files.map((file) => host.readFile(file))]);
    expect(longRead).toEqual({ ok: true, text });
    expect(reads).toEqual(files.map((_, i) => ({ ok: true, text: `${i}\n`.repeat(i + 1) })));
  });

  it("reads files whose length falls on or beside the read buffers' edges (512 bytes, then 16 KiB)", async () => {
    for (const size of [0, 511, 512, 513, 512 + 16384, 512 + 16384 + 1, MAX_FILE_BYTES]) {
      const file = path.join(dir, `edge-${size}`);
      const text = Array.from({ length: size }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
      writeFileSync(file, text);
      expect(await host.readFile(file), `${size} bytes`).toEqual({ ok: true, text });
    }
  });

  it('leaves no read buffer behind per file: 300 small files (a process table) add well under 1 MiB of buffers', async () => {
    const files = Array.from({ length: 300 }, (_, i) => path.join(dir, `comm-${i}`));
    for (const file of files) writeFileSync(file, 'systemd-timesyncd\n');
    await host.readFile(files[0]!); // the read buffer itself
    const before = process.memoryUsage().arrayBuffers;
    for (const file of files) expect(await host.readFile(file)).toEqual({ ok: true, text: 'systemd-timesyncd\n' });
    // A fresh 16 KiB buffer per read (and one more to see the end of each file) left about 3 MiB here.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024);
  });

  it('lists directories sorted, reads links and stats with mtime', async () => {
    const sub = path.join(dir, 'sub');
    mkdirSync(sub);
    writeFileSync(path.join(sub, 'b'), '');
    writeFileSync(path.join(sub, 'a'), '');
    symlinkSync('../dm-0', path.join(sub, 'link'));
    expect(await host.readDir(sub)).toEqual({ ok: true, entries: ['a', 'b', 'link'] });
    expect(await host.readLink(path.join(sub, 'link'))).toEqual({ ok: true, target: '../dm-0' });
    const s = await host.stat(sub);
    expect(s.ok && s.isDirectory && typeof s.mtimeMs === 'number').toBe(true);
    expect(await host.stat(path.join(sub, 'nope'))).toEqual({ ok: false, error: 'not_found' });
  });
});
