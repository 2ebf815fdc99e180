// How the agent runs a script of its own in Windows PowerShell (the toast of windowsNotify.ts, the
// named pipe's host of src/agent/windowsPipeEndpoint.ts): powershell.exe by its path under
// SystemRoot, never a PATH search, and the script as -EncodedCommand (base64 of its UTF-16LE text),
// so no command-line quoting applies to it.

/** Windows PowerShell 5.1, present on every supported Windows (its path, not a PATH search). */
const WINDOWS_POWERSHELL = '%SystemRoot%\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';
export const POWERSHELL_FLAGS = ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass'];

/** PowerShell's -EncodedCommand form of a script: base64 of its UTF-16LE text. */
export function encodedCommand(script: string): string {
  return Buffer.from(script, 'utf16le').toString('base64');
}

/** The command that runs `script` in Windows PowerShell. */
export function powerShellCommand(script: string, env: NodeJS.ProcessEnv = process.env): [string, string[]] {
  const powershell = WINDOWS_POWERSHELL.replace('%SystemRoot%', env.SystemRoot ?? 'C:\\Windows');
  return [powershell, [...POWERSHELL_FLAGS, '-EncodedCommand', encodedCommand(script)]];
}
