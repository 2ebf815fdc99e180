// rc.conf(5) settings as sysrc(8) resolves them (defaults, rc.conf, rc.conf.local, rc.conf.d):
// the administrator's intent, which the checks report beside the running state.
import type { CheckContext, CommandResult } from '../types';
import { parseBoolean } from '../text';
import { commandFailureReason, type CommandFailureReason } from '../verdict';

const SYSRC = '/usr/sbin/sysrc';

/** Every rc.conf variable a FreeBSD check reports, read with one sysrc run per cycle. */
const RC_VARIABLES = [
  'pf_enable',
  'firewall_enable',
  'firewall_type',
  'ipfilter_enable',
  'ntpd_enable',
  'ntpdate_enable',
  'chronyd_enable',
  'openntpd_enable',
  'sshd_enable',
] as const;
export type RcVariable = (typeof RC_VARIABLES)[number];

/** `sysrc -i a b c`: one `name: value` line per known variable; unknown ones (ports not installed) are skipped, exit 1. */
export function rcProbe(ctx: CheckContext): Promise<CommandResult> {
  return ctx.shared('freebsd:sysrc', () => ctx.host.run(SYSRC, ['-i', ...RC_VARIABLES]));
}

export type RcVars = { ok: true; values: Partial<Record<RcVariable, string>> } | { ok: false; reason: CommandFailureReason };

export function parseRcVars(result: CommandResult): RcVars {
  if (result.error) return { ok: false, reason: commandFailureReason(result) };
  const values: Partial<Record<RcVariable, string>> = {};
  for (const line of result.stdout.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*): (.*)$/.exec(line);
    const name = match?.[1] as RcVariable | undefined;
    if (name && RC_VARIABLES.includes(name)) values[name] = match![2]!;
  }
  // Exit 1 also means "some variable is unknown" (ports not installed); only an exit with
  // nothing understood is a failure.
  if (result.exitCode !== 0 && Object.keys(values).length === 0 && result.stderr.trim() !== '') {
    return { ok: false, reason: commandFailureReason(result) };
  }
  return { ok: true, values };
}

/**
 * rc.subr's checkyesno: YES/TRUE/ON/1 enable, NO/FALSE/OFF/0 disable (any case); anything else
 * is "not set properly" (rc treats it as off) and undefined here means "not set at all".
 */
export function rcEnabled(value: string | undefined): boolean | 'invalid' | undefined {
  return value === undefined ? undefined : (parseBoolean(value) ?? 'invalid');
}

/** Evidence form of an rc variable: true/false, "invalid", or null when unset. */
export function rcEvidence(vars: RcVars, name: RcVariable): boolean | 'invalid' | null | 'unreadable' {
  if (!vars.ok) return 'unreadable';
  return rcEnabled(vars.values[name]) ?? null;
}
