// Probes several macOS checks share, each run once per cycle through ctx.shared(): property-list
// files (XML, or binary converted by plutil) and the console user whose settings are per-user.
import type { CheckContext, CommandResult } from '../types';
import { commandFailureReason, fsFailureReason, type CommandFailureReason, type FsFailureReason } from '../verdict';
import { parsePlist, plistDict, type PlistDict } from './plist';

const PLUTIL = '/usr/bin/plutil';
const SCUTIL = '/usr/sbin/scutil';
/** Configuration profiles (MDM) land here; their values win over the local ones. */
export const MANAGED_PREFERENCES = '/Library/Managed Preferences';

export type PlistFile =
  { state: 'present'; dict: PlistDict } | { state: 'absent' } | { state: 'unreadable'; reason: CommandFailureReason | FsFailureReason };

/** Reads a property-list file; binary ones (`bplist00…`) go through `plutil -convert xml1 -o -`. */
export function readPlistFile(ctx: CheckContext, path: string): Promise<PlistFile> {
  return ctx.shared(`darwin:plist:${path}`, async () => {
    const file = await ctx.host.readFile(path);
    if (!file.ok) return file.error === 'not_found' ? { state: 'absent' } : { state: 'unreadable', reason: fsFailureReason(file.error) };
    let xml = file.text;
    if (xml.startsWith('bplist')) {
      const converted = await ctx.host.run(PLUTIL, ['-convert', 'xml1', '-o', '-', path]);
      if (converted.error || converted.exitCode !== 0) return { state: 'unreadable', reason: commandFailureReason(converted) };
      xml = converted.stdout;
    }
    const parsed = parsePlist(xml);
    const dict = parsed.ok ? plistDict(parsed.value) : undefined;
    return dict ? { state: 'present', dict } : { state: 'unreadable', reason: 'parse_error' };
  });
}

export type ConsoleUser =
  | { state: 'user'; name: string; uid: number; gid: number }
  /** Nobody at the screen: the login window, no graphical session, or a system account (Setup Assistant). */
  | { state: 'none'; why: 'login_window' | 'no_session' | 'system_account' | 'ambiguous' }
  | { state: 'unreadable'; reason: CommandFailureReason | FsFailureReason };

/** macOS gives people uids from 501; anything lower is root or a system account such as _mbsetupuser (248). */
const FIRST_PERSON_UID = 501;

/**
 * Parses `scutil` `show State:/Users/ConsoleUser`. The outer Name/UID/GID describe the console
 * user; the SessionInfo entry marked kCGSSessionOnConsoleKey TRUE is the session on screen.
 * When both exist and name different uids (fast user switching in progress), nobody is sure.
 */
export function parseConsoleUser(output: string): ConsoleUser {
  if (/^\s*No such key\s*$/m.test(output)) return { state: 'none', why: 'no_session' };
  if (!/^<dictionary> \{$/m.test(output)) return { state: 'unreadable', reason: 'parse_error' };
  const name = /^ {2}Name : (.+)$/m.exec(output)?.[1];
  const outerUid = /^ {2}UID : (\d+)$/m.exec(output)?.[1];
  const outerGid = /^ {2}GID : (\d+)$/m.exec(output)?.[1];
  if (name === 'loginwindow') return { state: 'none', why: 'login_window' };
  const onConsole = output
    .split(/^ {4}\d+ : <dictionary> \{$/m)
    .slice(1)
    .filter((session) => /^\s+kCGSSessionOnConsoleKey : TRUE$/m.test(session))
    .map((session) => ({
      uid: /^\s+kCGSSessionUserIDKey : (\d+)$/m.exec(session)?.[1],
      gid: /^\s+kCGSSessionGroupIDKey : (\d+)$/m.exec(session)?.[1],
    }));
  if (onConsole.length > 1) return { state: 'none', why: 'ambiguous' };
  const session = onConsole[0];
  if (session?.uid !== undefined && outerUid !== undefined && session.uid !== outerUid) return { state: 'none', why: 'ambiguous' };
  const uid = session?.uid ?? outerUid;
  const gid = outerGid ?? session?.gid;
  if (name === undefined || uid === undefined || gid === undefined) return { state: 'unreadable', reason: 'parse_error' };
  if (Number(uid) < FIRST_PERSON_UID) return { state: 'none', why: 'system_account' };
  return { state: 'user', name, uid: Number(uid), gid: Number(gid) };
}

export function consoleUser(ctx: CheckContext): Promise<ConsoleUser> {
  return ctx.shared('darwin:console-user', async () => {
    const result = await ctx.host.run(SCUTIL, [], { input: 'show State:/Users/ConsoleUser\n' });
    if (result.error || result.exitCode !== 0) return { state: 'unreadable', reason: commandFailureReason(result) };
    return parseConsoleUser(result.stdout);
  });
}

export const LAUNCHCTL = '/bin/launchctl';
const SUDO = '/usr/bin/sudo';

/**
 * Runs a command as the console user inside that user's launchd session (`launchctl asuser <uid>
 * sudo -n -u #<uid> …`): a bare uid switch keeps root's bootstrap namespace, where cfprefsd and
 * sysadminctl answer for the wrong session. Needs the agent to run as root.
 */
export function runAsUser(ctx: CheckContext, user: { uid: number }, command: string, args: readonly string[]): Promise<CommandResult> {
  return ctx.host.run(LAUNCHCTL, ['asuser', String(user.uid), SUDO, '-n', '-u', `#${user.uid}`, command, ...args]);
}
