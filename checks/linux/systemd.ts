// systemd facts: whether systemd is the running init (sd_booted(3): /run/systemd/system exists)
// and the enablement state of unit files. Unit files exist on disk even where systemd does not
// run (containers, other inits), and an enabled timer there never fires.
import type { CheckContext, Host } from '../types';
import { commandFailureReason, type CommandFailureReason } from '../verdict';
import { runTool } from './tools';

export function systemdBooted(ctx: CheckContext): Promise<boolean> {
  return ctx.shared('linux.systemdBooted', async () => {
    const s = await ctx.host.stat('/run/systemd/system');
    return s.ok && s.isDirectory;
  });
}

const SYSTEMCTL = '/usr/bin/systemctl';

export type UnitFileStates = { ok: true; states: Record<string, string> } | { ok: false; reason: CommandFailureReason };

/**
 * `systemctl list-unit-files` for the given units (works offline, reads unit files). Units that do
 * not exist are absent from `states`; exit code 1 with no output means none exists.
 */
export async function unitFileStates(host: Host, units: readonly string[]): Promise<UnitFileStates> {
  const result = await runTool(host, SYSTEMCTL, ['list-unit-files', '--no-legend', '--no-pager', ...units]);
  if (result.error) return { ok: false, reason: commandFailureReason(result) };
  const states: Record<string, string> = {};
  for (const line of result.stdout.split('\n')) {
    const [unit, state] = line.trim().split(/\s+/);
    if (unit && state && units.includes(unit)) states[unit] = state;
  }
  if (result.exitCode !== 0 && Object.keys(states).length === 0 && result.stdout.trim() !== '') return { ok: false, reason: 'parse_error' };
  return { ok: true, states };
}

/** Enablement tokens of systemctl(1) that mean "starts by itself"; any other token does not. */
const ENABLED_STATES = new Set(['enabled', 'enabled-runtime']);
const DISABLED_STATES = new Set(['disabled', 'masked', 'masked-runtime']);

/** true/false for known states, undefined for states that say nothing either way (static, indirect, …). */
export function isEnabledState(state: string | undefined): boolean | undefined {
  if (state === undefined) return false;
  if (ENABLED_STATES.has(state)) return true;
  if (DISABLED_STATES.has(state)) return false;
  return undefined;
}
