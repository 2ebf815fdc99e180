// Runs Windows PowerShell scripts that print one JSON document. Structured output only: cmdlet and
// CIM property values, registry values and enum names are the same on every display language,
// while `w32tm`, `netsh`, `manage-bde` and `net accounts` print translated text (research §0.4).
import type { Host } from '../types';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

/** Windows PowerShell 5.1 ships with every supported Windows here; from a 64-bit process this is the 64-bit one. */
export const POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';

/** Every script starts `powershell.exe -NoProfile -NonInteractive -Command <script>`: no profile, never a prompt. */
export function powershellArgs(script: string): string[] {
  return ['-NoProfile', '-NonInteractive', '-Command', script];
}

/**
 * Helpers every script starts with. Errors stop the section they happen in (never the script);
 * a section reports `{ok:false,error}` with a locale-free error kind (exception type or CIM
 * status name, never the translated message). Output is ASCII JSON (non-ASCII characters as
 * \uXXXX), so the console code page cannot garble it. Scripts use single quotes only, so that
 * Windows command-line quoting never has to carry a double quote.
 */
export const PRELUDE = String.raw`
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$HKLM = [Microsoft.Win32.RegistryKey]::OpenBaseKey('LocalMachine', 'Registry64')

# CIM-based cmdlets (NetSecurity, Defender, NetTCPIP) wrap the CimException in a CimJobException.
function Get-ErrorKind($Record) {
  $e = $Record.Exception
  while ($null -ne $e.InnerException -and ($e -is [System.Management.Automation.MethodInvocationException] -or $e.GetType().Name -eq 'CimJobException')) { $e = $e.InnerException }
  if ($e.GetType().FullName -eq 'Microsoft.Management.Infrastructure.CimException') { return 'cim_' + $e.NativeErrorCode }
  if ($e -is [System.UnauthorizedAccessException] -or $e -is [System.Security.SecurityException]) { return 'access_denied' }
  if ($e -is [System.Management.Automation.CommandNotFoundException]) { return 'command_not_found' }
  return 'error_' + $e.GetType().Name
}

function Invoke-Section([scriptblock]$Collect) {
  try { [ordered]@{ ok = $true; value = (& $Collect) } }
  catch { [ordered]@{ ok = $false; error = (Get-ErrorKind $_) } }
}

function Invoke-ListSection([scriptblock]$Collect) {
  try { [ordered]@{ ok = $true; value = @(& $Collect) } }
  catch { [ordered]@{ ok = $false; error = (Get-ErrorKind $_) } }
}

# The named values present under a key; $null when the key itself does not exist.
function Read-Key([Microsoft.Win32.RegistryKey]$Root, [string]$Path, [string[]]$Names) {
  $key = $Root.OpenSubKey($Path)
  if ($null -eq $key) { return $null }
  try {
    $values = [ordered]@{}
    foreach ($name in $Names) {
      $value = $key.GetValue($name, $null, 'DoNotExpandEnvironmentNames')
      if ($null -ne $value) { $values[$name] = $value }
    }
    $values
  } finally { $key.Close() }
}

function Write-Json($Document) {
  $json = ConvertTo-Json -InputObject $Document -Depth 10 -Compress
  [regex]::Replace($json, '[^\x00-\x7F]', { param($m) '\u{0:x4}' -f [int][char]$m.Value })
}
`;

/** A PowerShell array literal of single-quoted strings (the names here never contain a quote). */
export function psStrings(values: readonly string[]): string {
  return `@(${values.map((value) => `'${value}'`).join(', ')})`;
}

export type PowerShellJson = { ok: true; json: unknown } | { ok: false; reason: CommandFailureReason; exitCode?: number | null };

/** Runs one script and parses its JSON; any failure is a reason for UNKNOWN, never an exception. */
export async function runPowerShellJson(host: Host, script: string, timeoutMs: number): Promise<PowerShellJson> {
  const result = await host.run(POWERSHELL, powershellArgs(script), { timeoutMs });
  if (result.error) return { ok: false, reason: commandFailureReason(result) };
  // A script that dies outside its sections exits non-zero with a translated message on stderr: not parsed.
  if (result.exitCode !== 0) return { ok: false, reason: 'check_error', exitCode: result.exitCode };
  const text = result.stdout.replace(/^\uFEFF/, '').trim();
  try {
    return { ok: true, json: JSON.parse(text) };
  } catch {
    return { ok: false, reason: 'parse_error' };
  }
}
