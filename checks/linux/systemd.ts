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

export type UnitProperties = { ok: true; units: Record<string, Record<string, string>> } | { ok: false; reason: CommandFailureReason };

/**
 * `systemctl show` of the given properties of units, by unit (`Id` is always asked for): the manager's
 * own record of what a unit did (a timer's last trigger, a service's result and exit). Run with
 * TZ=UTC so that timestamps print in UTC (see parseSystemdTimestamp).
 */
export async function unitProperties(host: Host, units: readonly string[], properties: readonly string[]): Promise<UnitProperties> {
  const result = await runTool(host, SYSTEMCTL, ['show', '--no-pager', `--property=Id,${properties.join(',')}`, ...units], {
    env: { TZ: 'UTC' },
  });
  // A non-zero exit is systemctl failing as a whole (no bus, no manager): an unknown unit is shown, LoadState=not-found.
  if (result.error || result.exitCode !== 0) return { ok: false, reason: commandFailureReason(result) };
  const out: Record<string, Record<string, string>> = {};
  // One block per unit, in the order asked, separated by an empty line.
  for (const block of result.stdout.split(/\n\s*\n/)) {
    const props: Record<string, string> = {};
    for (const line of block.split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) props[line.slice(0, eq)] = line.slice(eq + 1).trim();
    }
    if (props.Id) out[props.Id] = props;
  }
  if (units.some((u) => !out[u])) return { ok: false, reason: 'parse_error' };
  return { ok: true, units: out };
}

/**
 * A timestamp property of `systemctl show` in ms since the epoch: `Mon 2026-09-07 00:15:00 UTC` (the
 * default format, in UTC under TZ=UTC) or `@1759405500` (--timestamp=unix); undefined for "never"
 * (empty, `n/a`, `0`, as systemd prints an unset timestamp), null for a form not understood.
 */
export function parseSystemdTimestamp(value: string | undefined): number | undefined | null {
  const v = (value ?? '').trim();
  if (v === '' || v === 'n/a' || v === '0') return undefined;
  const unix = /^@(\d+)$/.exec(v);
  if (unix) return Number(unix[1]) * 1000;
  const utc = /^[A-Z][a-z]{2} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.\d+)? UTC$/.exec(v);
  return utc ? Date.parse(`${utc[1]}T${utc[2]}Z`) : null;
}
