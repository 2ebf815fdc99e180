// The local endpoint on Windows (src/agent/localEndpoint.ts): the named pipe \\.\pipe\device-agent.
// Node can neither give a pipe an ACL (libuv passes no SECURITY_ATTRIBUTES to CreateNamedPipe) nor
// learn who opened it, so the service (LocalSystem) hosts the pipe in a Windows PowerShell process of
// its own, through .NET's NamedPipeServerStream, and talks to it over its standard input and output:
//
// - The pipe's ACL grants SYSTEM and the console user (Win32_ComputerSystem.UserName, the user
//   logged on at the console, as windowsNotify.ts reads it, turned into a SID), nobody else:
//   Windows refuses every other account's open. One instance, created when the service starts,
//   before any user logs on; a user cannot add an instance, nor create the pipe while it exists.
//   When the console user changes, the host sets the new ACL on the same pipe (it keeps
//   WRITE_DAC for that), so the name is never free for someone else to take.
// - For each connection the host reads the request line, then impersonates the client
//   (RunAsClient: Windows needs a read before that) to read the SID of its token, and tells the
//   service what Windows says: the client's SID, the console user's SID now, the request (base64).
//   The service answers that connection only if the client is SYSTEM or the console user now (an
//   ACL set for the previous console user lets nobody else through), with the same answers as the
//   Unix socket. The host writes the answer (base64) to the pipe and waits for the next client.
// - The host ends when the service's process does (it watches it), so a killed service leaves no
//   pipe holder behind; the service ends the host when it stops.
//
// Not run on Windows: this machine has none (docs/agent.md, "My device"). The service's side of the
// protocol is tested with a stand-in host (test/agent/windowsPipeEndpoint.test.ts).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { PIPE_NAME, PIPE_PATH } from '../platform/localEndpoint';
import { powerShellCommand } from '../platform/windowsPowerShell';
import { firstLine } from './errors';
import {
  answerRequest,
  MAX_REQUEST_BYTES,
  refusal,
  REQUEST_TIMEOUT_MS,
  type EndpointAnswer,
  type EndpointHandlers,
  type LocalEndpoint,
} from './localEndpoint';
import type { Logger } from './logger';

/** LocalSystem's SID. */
export const SYSTEM_SID = 'S-1-5-18';
/** How often the host looks at the console user while no client is connected, in 1-second slices. */
const CONSOLE_EVERY_SLICES = 5;

/**
 * The host script. Nothing from outside enters its text: the service's process id is a number and
 * every other value is ours. What it prints are single-line JSON objects made by ConvertTo-Json.
 */
export function pipeHostScript(servicePid: number): string {
  if (!Number.isSafeInteger(servicePid) || servicePid <= 0) throw new Error(`not a process id: ${servicePid}`);
  return [
    "$ErrorActionPreference = 'Stop'",
    'Add-Type -AssemblyName System.Core',
    `$service = [System.Diagnostics.Process]::GetProcessById(${servicePid})`,
    "$system = New-Object System.Security.Principal.SecurityIdentifier 'S-1-5-18'",
    'function Get-ConsoleSid {',
    '  $name = (Get-CimInstance -ClassName Win32_ComputerSystem).UserName',
    '  if (-not $name) { return $null }',
    '  try { return (New-Object System.Security.Principal.NTAccount $name).Translate([System.Security.Principal.SecurityIdentifier]).Value } catch { return $null }',
    '}',
    'function New-PipeSecurity($consoleSid) {',
    '  $security = New-Object System.IO.Pipes.PipeSecurity',
    '  $allow = [System.Security.AccessControl.AccessControlType]::Allow',
    '  $security.AddAccessRule((New-Object System.IO.Pipes.PipeAccessRule $system, ([System.IO.Pipes.PipeAccessRights]::FullControl), $allow))',
    '  if ($consoleSid) {',
    '    $user = New-Object System.Security.Principal.SecurityIdentifier $consoleSid',
    '    $rights = [System.IO.Pipes.PipeAccessRights]::ReadWrite -bor [System.IO.Pipes.PipeAccessRights]::Synchronize',
    '    $security.AddAccessRule((New-Object System.IO.Pipes.PipeAccessRule $user, $rights, $allow))',
    '  }',
    '  return $security',
    '}',
    'function Send($message) { [Console]::Out.WriteLine((ConvertTo-Json -InputObject $message -Compress)); [Console]::Out.Flush() }',
    'function Read-Request($pipe) {',
    `  $buffer = New-Object byte[] ${MAX_REQUEST_BYTES + 1}`,
    '  $count = 0',
    `  $deadline = [DateTime]::UtcNow.AddMilliseconds(${REQUEST_TIMEOUT_MS})`,
    '  while ($count -lt $buffer.Length) {',
    '    $read = $pipe.BeginRead($buffer, $count, $buffer.Length - $count, $null, $null)',
    '    $left = [int][Math]::Max(0, ($deadline - [DateTime]::UtcNow).TotalMilliseconds)',
    '    if (-not $read.AsyncWaitHandle.WaitOne($left)) { return $null }',
    '    $n = $pipe.EndRead($read)',
    '    if ($n -eq 0) { break }',
    '    $count += $n',
    '    if ([Array]::IndexOf($buffer, [byte]10, 0, $count) -ge 0) { break }',
    '  }',
    '  return [Convert]::ToBase64String($buffer, 0, $count)',
    '}',
    '$consoleSid = Get-ConsoleSid',
    '$pipe = New-Object System.IO.Pipes.NamedPipeServerStream -ArgumentList @(',
    `  '${PIPE_NAME}', [System.IO.Pipes.PipeDirection]::InOut, 1, [System.IO.Pipes.PipeTransmissionMode]::Byte,`,
    '  [System.IO.Pipes.PipeOptions]::Asynchronous, 4096, 4096, (New-PipeSecurity $consoleSid),',
    '  [System.IO.HandleInheritability]::None, [System.IO.Pipes.PipeAccessRights]::ChangePermissions)',
    "Send ([ordered]@{ event = 'listening'; console = $consoleSid })",
    '$connection = 0',
    '$slices = 0',
    'while ($true) {',
    '  $waiting = $pipe.BeginWaitForConnection($null, $null)',
    '  while (-not $waiting.AsyncWaitHandle.WaitOne(1000)) {',
    '    if ($service.HasExited) { exit 0 }',
    '    $slices++',
    `    if ($slices % ${CONSOLE_EVERY_SLICES} -ne 0) { continue }`,
    '    $now = Get-ConsoleSid',
    '    if ($now -ne $consoleSid) {',
    '      $consoleSid = $now',
    '      $pipe.SetAccessControl((New-PipeSecurity $consoleSid))',
    "      Send ([ordered]@{ event = 'console'; console = $consoleSid })",
    '    }',
    '  }',
    '  try {',
    '    $pipe.EndWaitForConnection($waiting)',
    '    $connection++',
    '    $request = Read-Request $pipe',
    '    if ($null -ne $request) {',
    '      $script:client = $null',
    '      $pipe.RunAsClient({ $script:client = [System.Security.Principal.WindowsIdentity]::GetCurrent().User.Value })',
    "      Send ([ordered]@{ event = 'request'; connection = $connection; client = $script:client; console = (Get-ConsoleSid); request = $request })",
    '      $reply = [Console]::In.ReadLine()',
    '      if ($null -eq $reply) { exit 0 }',
    '      $answer = ConvertFrom-Json -InputObject $reply',
    '      if ($answer.connection -eq $connection) {',
    '        $bytes = [Convert]::FromBase64String($answer.answer)',
    '        $pipe.Write($bytes, 0, $bytes.Length)',
    '        $pipe.WaitForPipeDrain()',
    '      }',
    '    }',
    '  } catch {',
    "    Send ([ordered]@{ event = 'failed'; message = $_.Exception.Message })",
    '  } finally {',
    '    if ($pipe.IsConnected) { $pipe.Disconnect() }',
    '  }',
    '}',
  ].join('\n');
}

/** What the host says, one line each. */
export type HostMessage =
  | { event: 'listening' | 'console'; console: string | null }
  | { event: 'request'; connection: number; client: string; console: string | null; request: string }
  | { event: 'failed'; message: string };

const SID = /^S-1-\d+(-\d+)+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const sidOrNull = (value: unknown): value is string | null => value === null || (typeof value === 'string' && SID.test(value));

/** One line of the host's, checked: anything else is an error (the host is ours; a surprise is a fault). */
export function parseHostLine(line: string): HostMessage {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error('the pipe host wrote a line that is not JSON');
  }
  if (value === null || typeof value !== 'object') throw new Error('the pipe host wrote a line that is not an object');
  const { event } = value;
  if ((event === 'listening' || event === 'console') && sidOrNull(value.console)) return { event, console: value.console };
  if (
    event === 'request' &&
    Number.isSafeInteger(value.connection) &&
    typeof value.client === 'string' &&
    SID.test(value.client) &&
    sidOrNull(value.console) &&
    typeof value.request === 'string' &&
    BASE64.test(value.request)
  )
    return { event, connection: value.connection as number, client: value.client, console: value.console, request: value.request };
  if (event === 'failed' && typeof value.message === 'string') return { event, message: value.message };
  throw new Error(`the pipe host wrote an unexpected ${typeof event === 'string' ? `"${event.slice(0, 40)}" message` : 'line'}`);
}

/** The connection of a request line parseHostLine refused, when it names one. */
function requestConnection(line: string): number | null {
  try {
    const { event, connection } = JSON.parse(line) as Record<string, unknown>;
    return event === 'request' && Number.isSafeInteger(connection) ? (connection as number) : null;
  } catch {
    return null;
  }
}

/** Whether a client is answered: SYSTEM, or the console user now (the ACL may still name the previous one). */
export function admitted(client: string, consoleSid: string | null): boolean {
  return client === SYSTEM_SID || (consoleSid !== null && client === consoleSid);
}

/** The request line a client sent (the text up to its first line break), or null when it sent no line. */
export function requestLine(base64: string): string | null {
  const text = Buffer.from(base64, 'base64').toString('utf8');
  const end = text.indexOf('\n');
  return end === -1 ? null : text.slice(0, end);
}

interface PipeEndpointOptions {
  handlers: EndpointHandlers;
  log: Logger;
  /** The host's command: Windows PowerShell running pipeHostScript, but in tests, which have no Windows. */
  command?: [string, string[]];
}

/** Starts the pipe's host; resolves once it listens, rejects when it ends before (the pipe is taken, no PowerShell). */
export function startPipeEndpoint(options: PipeEndpointOptions): Promise<LocalEndpoint> {
  const { handlers, log } = options;
  const [command, args] = options.command ?? powerShellCommand(pipeHostScript(process.pid));
  const host = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  let stderr = '';
  host.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 4096) stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => host.once('close', () => resolve()));
  let closing = false;

  const answer = (connection: number, reply: EndpointAnswer) =>
    host.stdin.write(`${JSON.stringify({ connection, answer: Buffer.from(`${JSON.stringify(reply)}\n`).toString('base64') })}\n`);

  return new Promise<LocalEndpoint>((resolve, reject) => {
    let listening = false;
    host.once('error', reject);
    host.stdin.on('error', () => undefined);
    void exited.then(() => {
      const why = firstLine(stderr.trim() || `exit code ${host.exitCode ?? host.signalCode}`);
      if (!listening) reject(new Error(`the named pipe's host ended before listening: ${why}`));
      else if (!closing)
        log.warn(
          { event: 'local_endpoint_stopped', error: why },
          'the local endpoint stopped: my-device and check --report work for administrators only',
        );
    });
    // One request at a time: the host waits for each answer before it takes the next client.
    const lines = createInterface({ input: host.stdout });
    lines.on('line', (line) => {
      let message: HostMessage;
      try {
        message = parseHostLine(line);
      } catch (err) {
        log.warn({ event: 'local_endpoint_failed', error: firstLine(err) }, 'local endpoint host fault');
        // The host waits for an answer to every request it told: it gets one, or the pipe would stay taken.
        const connection = requestConnection(line);
        if (connection !== null) answer(connection, { ok: false, error: 'failed', message: 'the service could not read this request' });
        return;
      }
      if (message.event === 'failed') {
        log.warn({ event: 'local_endpoint_failed', error: firstLine(message.message) }, 'local endpoint connection failed');
        return;
      }
      if (message.event !== 'request') {
        // The console user's SID is theirs to know; the log says only whether there is one.
        log.info(
          { event: message.event === 'listening' ? 'local_endpoint' : 'local_endpoint_owner', console_user: message.console !== null },
          message.event === 'listening' ? 'local endpoint listening' : 'local endpoint handed to the console user',
        );
        if (message.event === 'listening' && !listening) {
          listening = true;
          resolve({
            path: PIPE_PATH,
            close: async () => {
              closing = true;
              host.kill();
              await exited;
            },
          });
        }
        return;
      }
      const { connection } = message;
      if (!admitted(message.client, message.console)) {
        log.info({ event: 'local_endpoint_refused' }, 'local endpoint refused a user who is not at the screen');
        answer(connection, { ok: false, error: 'refused', message: refusal('win32') });
        return;
      }
      void answerRequest(requestLine(message.request), handlers, log).then((reply) => answer(connection, reply));
    });
  });
}
