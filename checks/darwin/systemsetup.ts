// systemsetup answers "Label: Value" for TIME_SYNC and REMOTE_LOGIN. It needs root and prints its
// refusals on stdout, so a refusal must read as "could not tell" (UNKNOWN), never as "off".
import type { CommandResult } from '../types';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

export const SYSTEMSETUP = '/usr/sbin/systemsetup';

/**
 * The value after "<label>: ", or why there is none: "You need administrator access to run this
 * tool... exiting!" without root; "… requires Full Disk Access privileges." when the calling
 * process lacks Full Disk Access (macOS 10.15+).
 */
export function parseSystemsetup(
  result: CommandResult,
  label: string,
): { value: string } | { reason: CommandFailureReason | 'full_disk_access_required' } {
  if (result.error) return { reason: commandFailureReason(result) };
  const text = `${result.stdout}\n${result.stderr}`;
  const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const value = new RegExp(`^${escaped}: (.+?)\\s*$`, 'm').exec(text)?.[1];
  if (value !== undefined) return { value };
  if (/^You need administrator access to run this tool\.\.\. exiting!$/m.test(text)) return { reason: 'permission_denied' };
  if (/^.*requires Full Disk Access privileges\.$/m.test(text)) return { reason: 'full_disk_access_required' };
  return { reason: 'parse_error' };
}
