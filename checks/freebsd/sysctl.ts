// sysctl(8) reads and the jail question several FreeBSD checks share. Inside a jail the host's
// GEOM providers, packet filters and clock are out of sight, so host-level controls follow
// policy.containers.mode (research §0.7, §1.3, §3.3).
import type { Policy } from '../policy';
import type { CheckContext, CommandResult, Host } from '../types';
import { commandFailureReason, containersModeVerdict, type CommandFailureReason } from '../verdict';

const SYSCTL = '/sbin/sysctl';

export type SysctlValue = { state: 'value'; value: string } | { state: 'absent' } | { state: 'error'; reason: CommandFailureReason };

export function readSysctl(host: Host, name: string): Promise<CommandResult> {
  return host.run(SYSCTL, ['-n', name]);
}

/** `sysctl -n <oid>`: the value, "absent" for an OID the running kernel does not have (module not loaded). */
export function interpretSysctl(result: CommandResult): SysctlValue {
  if (result.error) return { state: 'error', reason: commandFailureReason(result) };
  if (result.exitCode === 0) {
    const value = result.stdout.replace(/\n$/, '');
    return value.includes('\n') ? { state: 'error', reason: 'parse_error' } : { state: 'value', value };
  }
  if (/^sysctl: unknown oid '[^']+'/m.test(result.stderr)) return { state: 'absent' };
  return { state: 'error', reason: commandFailureReason(result) };
}

/** `security.jail.jailed`, read once per cycle. */
export function jailProbe(ctx: CheckContext): Promise<CommandResult> {
  return ctx.shared('freebsd:jailed', () => readSysctl(ctx.host, 'security.jail.jailed'));
}

/**
 * The verdict for a host-level control inside a jail, or null when not jailed. An unreadable
 * answer is not taken as "jailed": the check goes on and its own sources decide.
 */
export function jailVerdict(jailed: CommandResult, policy: Policy, source: string) {
  const read = interpretSysctl(jailed);
  return read.state === 'value' && read.value === '1' ? containersModeVerdict(policy, 'jail', { source, virtualization: 'jail' }) : null;
}
