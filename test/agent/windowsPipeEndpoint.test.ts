// The Windows local endpoint (src/agent/windowsPipeEndpoint.ts) cannot run here: no Windows, no
// Windows PowerShell, no named pipes with ACLs. What is tested is what can be:
// - the service's side of the line protocol, with the real module spawning a stand-in host (a Node
//   process that plays the host's part: it prints what the PowerShell host would print, Windows'
//   word for the client's SID included, and records the service's answers): who is answered
//   (SYSTEM, the console user now) and who is refused (another account; the console user of an ACL
//   gone stale), that refused requests reach no handler, malformed host lines, a host that ends
//   before listening or later, and that close() ends it;
// - the host script's text: the pipe's ACL (SYSTEM and the console user's SID, nothing else), the
//   one instance kept with WRITE_DAC for new ACLs, reading before impersonating, the client's SID
//   from its token, the answer written back, the watch on the service's process; that nothing but
//   a process id enters it, and how it reaches PowerShell (-EncodedCommand).
// Whether Windows runs it as written is untested (docs/agent.md, "My device").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { refusal, type EndpointAnswer, type EndpointHandlers } from '../../src/agent/localEndpoint';
import { createLogger } from '../../src/agent/logger';
import { admitted, parseHostLine, pipeHostScript, requestLine, startPipeEndpoint, SYSTEM_SID } from '../../src/agent/windowsPipeEndpoint';
import { localEndpointAddress } from '../../src/platform/localEndpoint';
import { powerShellCommand } from '../../src/platform/windowsPowerShell';
import { tempDir, until } from '../support/agent';

const ALICE = 'S-1-5-21-3623811015-3361044348-30300820-1013';
const BOB = 'S-1-5-21-3623811015-3361044348-30300820-1014';
const URL_ = 'https://agents.example.com/my-device?code=one-time';

/**
 * The host's stand-in: prints each line of its script; after a request, waits for the service's
 * answer on standard input and appends it to the answers file; then stays until ended, as the host.
 */
const STAND_IN = `
const [script, answers] = process.argv.slice(1);
const { appendFileSync } = require('node:fs');
const lines = require('node:readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
(async () => {
  for (const line of JSON.parse(script)) {
    if (line.stderr !== undefined) { process.stderr.write(line.stderr); process.exit(line.exit); }
    process.stdout.write(typeof line === 'string' ? line + '\\n' : JSON.stringify(line) + '\\n');
    if (line.event === 'request') appendFileSync(answers, (await lines.next()).value + '\\n');
  }
  setInterval(() => undefined, 60_000);
})();
`;

const b64 = (text: string) => Buffer.from(text).toString('base64');
const request = (connection: number, client: string, console_: string | null, text: string) => ({
  event: 'request',
  connection,
  client,
  console: console_,
  request: b64(text),
});

async function endpointWith(script: unknown[], handlers: EndpointHandlers) {
  const answers = join(tempDir(), 'answers');
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk: Buffer) => (logged += chunk.toString()));
  const log = await createLogger({ level: 'info', destination: logs, pretty: false });
  const endpoint = await startPipeEndpoint({
    handlers,
    log,
    command: [process.execPath, ['-e', STAND_IN, JSON.stringify(script), answers]],
  });
  /** The service's answers so far: connection and decoded answer. */
  const answered = () => {
    let text: string;
    try {
      text = readFileSync(answers, 'utf8');
    } catch {
      return [];
    }
    return text
      .trim()
      .split('\n')
      .map((line) => {
        const { connection, answer } = JSON.parse(line) as { connection: number; answer: string };
        const raw = Buffer.from(answer, 'base64').toString('utf8');
        expect(raw.endsWith('\n')).toBe(true);
        return { connection, answer: JSON.parse(raw) as EndpointAnswer };
      });
  };
  return { endpoint, answered, logged: () => logged };
}

describe("the service's side of the pipe host's protocol (a stand-in host)", () => {
  test('SYSTEM and the console user are answered; another account, or an ACL gone stale, refused without reaching a handler', async () => {
    const asked: string[] = [];
    const handlers: EndpointHandlers = {
      devicePage: () => (asked.push('device-page'), Promise.resolve({ offered: true, url: URL_, expiresAt: '2026-11-27T10:05:00Z' })),
      check: () => (asked.push('check'), Promise.resolve('delivered')),
    };
    const { endpoint, answered, logged } = await endpointWith(
      [
        { event: 'listening', console: ALICE },
        request(1, ALICE, ALICE, '{"op":"device-page"}\n'),
        request(2, BOB, ALICE, '{"op":"device-page"}\n'),
        request(3, SYSTEM_SID, null, '{"op":"check"}\n'),
        // Bob is at the screen now; the pipe's ACL still let Alice in.
        request(4, ALICE, BOB, '{"op":"check"}\n'),
        { event: 'console', console: BOB },
        request(5, BOB, BOB, '{"op":"device-page"}'),
        request(6, BOB, BOB, '{"op":"shutdown"}\nmore'),
        'not json',
        { event: 'request', connection: 7, client: 'Everyone', console: BOB, request: '' },
        { event: 'failed', message: 'Pipe is broken.\nat line 80' },
        request(8, BOB, BOB, '{"op":"device-page"}\n'),
      ],
      handlers,
    );
    try {
      expect(endpoint.path).toBe('\\\\.\\pipe\\device-agent');
      const got = await until(answered, (a) => a.length === 8, 30_000, 'eight answers');
      const refused = { ok: false, error: 'refused', message: refusal('win32') };
      expect(got).toEqual([
        { connection: 1, answer: { ok: true, url: URL_, expires_at: '2026-11-27T10:05:00Z' } },
        { connection: 2, answer: refused },
        { connection: 3, answer: { ok: true, cycle: 'delivered' } },
        { connection: 4, answer: refused },
        { connection: 5, answer: { ok: false, error: 'bad_request', message: 'the request is not one line of JSON' } },
        { connection: 6, answer: { ok: false, error: 'bad_request', message: 'unknown request' } },
        // A request the service cannot read is still answered: the host waits for every answer.
        { connection: 7, answer: { ok: false, error: 'failed', message: 'the service could not read this request' } },
        { connection: 8, answer: { ok: true, url: URL_, expires_at: '2026-11-27T10:05:00Z' } },
      ]);
      expect(asked).toEqual(['device-page', 'check', 'device-page']);
      const events = logged()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(events.map((e) => e.event)).toEqual([
        'local_endpoint',
        'local_endpoint_request',
        'local_endpoint_refused',
        'local_endpoint_request',
        'local_endpoint_refused',
        'local_endpoint_owner',
        'local_endpoint_failed',
        'local_endpoint_failed',
        'local_endpoint_failed',
        'local_endpoint_request',
      ]);
      expect(events[0]).toMatchObject({ console_user: true });
      expect(events.slice(6, 9).map((e) => e.error)).toEqual([
        'the pipe host wrote a line that is not JSON',
        'the pipe host wrote an unexpected "request" message',
        'Pipe is broken.',
      ]);
      // Neither the URL nor a SID is logged.
      expect(logged()).not.toContain('one-time');
      expect(logged()).not.toContain('S-1-5-21');
    } finally {
      await endpoint.close();
    }
  }, 60_000);

  test('a host that ends before listening: start fails with what it said', async () => {
    const script = [{ stderr: 'New-Object : All pipe instances are busy.\r\nAt line:40 char:9\r\n', exit: 1 }];
    await expect(
      startPipeEndpoint({
        handlers: { devicePage: () => Promise.reject(new Error('not asked')), check: () => Promise.reject(new Error('not asked')) },
        log: await createLogger({ level: 'error' }),
        command: [process.execPath, ['-e', STAND_IN, JSON.stringify(script), '/dev/null']],
      }),
    ).rejects.toThrow("the named pipe's host ended before listening: New-Object : All pipe instances are busy.");
    await expect(
      startPipeEndpoint({
        handlers: { devicePage: () => Promise.reject(new Error('not asked')), check: () => Promise.reject(new Error('not asked')) },
        log: await createLogger({ level: 'error' }),
        command: ['/nonexistent/powershell.exe', []],
      }),
    ).rejects.toThrow(/ENOENT/);
  });

  test('close() ends the host; a host that ends on its own is logged', async () => {
    const handlers: EndpointHandlers = { devicePage: () => Promise.reject(new Error('no')), check: () => Promise.resolve('x') };
    const { endpoint, logged } = await endpointWith([{ event: 'listening', console: null }], handlers);
    await endpoint.close();
    expect(logged()).not.toContain('local_endpoint_stopped');
    expect(JSON.parse(logged().trim())).toMatchObject({ event: 'local_endpoint', console_user: false });

    const logs = new PassThrough();
    let text = '';
    logs.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const ending = `process.stdout.write('{"event":"listening","console":null}\\n'); setTimeout(() => { process.stderr.write('gone\\n'); process.exit(3); }, 100);`;
    await startPipeEndpoint({
      handlers,
      log: await createLogger({ level: 'info', destination: logs, pretty: false }),
      command: [process.execPath, ['-e', ending]],
    });
    await until(
      () => text,
      (t) => t.includes('local_endpoint_stopped'),
      10_000,
      'the stop logged',
    );
    expect(text).toContain('"error":"gone"');
  });
});

describe('the host script', () => {
  const script = pipeHostScript(4242);
  const lines = script.split('\n');

  test('the pipe: one instance, its ACL SYSTEM and the console user only, kept with WRITE_DAC', () => {
    expect(lines).toContain('  $security = New-Object System.IO.Pipes.PipeSecurity');
    expect(lines).toContain("$system = New-Object System.Security.Principal.SecurityIdentifier 'S-1-5-18'");
    expect(script.match(/AddAccessRule/g)).toHaveLength(2);
    expect(lines).toContain(
      '  $security.AddAccessRule((New-Object System.IO.Pipes.PipeAccessRule $system, ([System.IO.Pipes.PipeAccessRights]::FullControl), $allow))',
    );
    expect(lines).toContain(
      '    $rights = [System.IO.Pipes.PipeAccessRights]::ReadWrite -bor [System.IO.Pipes.PipeAccessRights]::Synchronize',
    );
    expect(lines).toContain('    $security.AddAccessRule((New-Object System.IO.Pipes.PipeAccessRule $user, $rights, $allow))');
    expect(script).toContain(
      [
        '$pipe = New-Object System.IO.Pipes.NamedPipeServerStream -ArgumentList @(',
        "  'device-agent', [System.IO.Pipes.PipeDirection]::InOut, 1, [System.IO.Pipes.PipeTransmissionMode]::Byte,",
        '  [System.IO.Pipes.PipeOptions]::Asynchronous, 4096, 4096, (New-PipeSecurity $consoleSid),',
        '  [System.IO.HandleInheritability]::None, [System.IO.Pipes.PipeAccessRights]::ChangePermissions)',
      ].join('\n'),
    );
    // The console user: who windowsNotify.ts notifies, as a SID; a new one gets the same pipe, a new ACL.
    expect(lines).toContain('  $name = (Get-CimInstance -ClassName Win32_ComputerSystem).UserName');
    expect(script).toContain('.Translate([System.Security.Principal.SecurityIdentifier]).Value');
    expect(script).toMatch(
      /if \(\$now -ne \$consoleSid\) \{\n {6}\$consoleSid = \$now\n {6}\$pipe\.SetAccessControl\(\(New-PipeSecurity \$consoleSid\)\)/,
    );
    expect(script).not.toMatch(/Dispose|\.Close\(\)/);
  });

  test('each client: the request read first, then its SID from its token, then the answer of that connection', () => {
    const read = lines.indexOf('    $request = Read-Request $pipe');
    const impersonate = lines.indexOf(
      '      $pipe.RunAsClient({ $script:client = [System.Security.Principal.WindowsIdentity]::GetCurrent().User.Value })',
    );
    const told = lines.findIndex((line) => line.includes("event = 'request'; connection = $connection; client = $script:client"));
    expect(read).toBeGreaterThan(0);
    expect(impersonate).toBeGreaterThan(read);
    expect(told).toBeGreaterThan(impersonate);
    expect(lines[told]).toContain('console = (Get-ConsoleSid); request = $request');
    expect(script).toContain('      if ($answer.connection -eq $connection) {');
    expect(lines).toContain('    if ($pipe.IsConnected) { $pipe.Disconnect() }');
    // At most 1025 bytes, for 5 s: the same limits as the Unix socket's.
    expect(lines).toContain('  $buffer = New-Object byte[] 1025');
    expect(lines).toContain('  $deadline = [DateTime]::UtcNow.AddMilliseconds(5000)');
    // The service's end is the host's: no pipe holder left behind.
    expect(lines).toContain('$service = [System.Diagnostics.Process]::GetProcessById(4242)');
    expect(lines).toContain('    if ($service.HasExited) { exit 0 }');
    expect(lines).toContain('      if ($null -eq $reply) { exit 0 }');
  });

  test('only a process id enters it; Windows PowerShell by its path, the script as -EncodedCommand', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 60]) expect(() => pipeHostScript(bad)).toThrow('not a process id');
    expect(pipeHostScript(7)).toBe(script.replace('GetProcessById(4242)', 'GetProcessById(7)'));
    const [command, args] = powerShellCommand(script, { SystemRoot: 'D:\\Win' });
    expect(command).toBe('D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(args.slice(0, -1)).toEqual(['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    expect(Buffer.from(args.at(-1)!, 'base64').toString('utf16le')).toBe(script);
  });
});

describe("the host's lines and the service's decision", () => {
  test('parseHostLine takes what the host prints and nothing else', () => {
    expect(parseHostLine('{"event":"listening","console":null}')).toEqual({ event: 'listening', console: null });
    expect(parseHostLine(`{"event":"console","console":"${ALICE}"}`)).toEqual({ event: 'console', console: ALICE });
    expect(parseHostLine(JSON.stringify(request(3, SYSTEM_SID, ALICE, 'x')))).toEqual(request(3, SYSTEM_SID, ALICE, 'x'));
    expect(parseHostLine('{"event":"failed","message":"m"}')).toEqual({ event: 'failed', message: 'm' });
    for (const bad of [
      '{"event":"listening","console":"alice"}',
      '{"event":"listening"}',
      '{"event":"request","connection":1.5,"client":"S-1-5-18","console":null,"request":""}',
      '{"event":"request","connection":"1","client":"S-1-5-18","console":null,"request":""}',
      '{"event":"request","connection":1,"client":"S-1-5-","console":null,"request":""}',
      '{"event":"request","connection":1,"client":"S-1-5-18","console":null,"request":"a b"}',
      '{"event":"request","connection":1,"client":"S-1-5-18","console":null}',
      '{"event":"failed","message":3}',
      '{"event":"shutdown"}',
      'null',
      '[]',
    ])
      expect(() => parseHostLine(bad), bad).toThrow(/the pipe host wrote/);
    expect(() => parseHostLine('{"event":1}')).toThrow('the pipe host wrote an unexpected line');
  });

  test('answered: SYSTEM always, the console user now, nobody else', () => {
    expect(admitted(SYSTEM_SID, null)).toBe(true);
    expect(admitted(SYSTEM_SID, ALICE)).toBe(true);
    expect(admitted(ALICE, ALICE)).toBe(true);
    expect(admitted(ALICE, BOB)).toBe(false);
    expect(admitted(ALICE, null)).toBe(false);
    // Administrators (S-1-5-32-544) is a group, never a token's user; an elevated admin is still their own SID.
    expect(admitted('S-1-5-32-544', ALICE)).toBe(false);
  });

  test('the request: the text up to the first line break; none without one', () => {
    expect(requestLine(b64('{"op":"check"}\nrest'))).toBe('{"op":"check"}');
    expect(requestLine(b64('{"op":"check"}'))).toBeNull();
    expect(requestLine('')).toBeNull();
  });

  test('clients find the pipe by its name; a refused one is told who is answered', () => {
    expect(localEndpointAddress({ DEVICE_AGENT_RUNTIME_DIR: '/elsewhere' }, 'win32')).toBe('\\\\.\\pipe\\device-agent');
    expect(refusal('win32')).toBe("the device-agent service answers only the user logged in at this computer's screen, and SYSTEM");
    expect(refusal('linux')).toBe("the device-agent service answers only the user logged in at this computer's screen, and root");
  });
});
