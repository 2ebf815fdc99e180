// REMOTE_LOGIN on macOS (research §8.1): is Remote Login (SSH) switched on? launchd's override
// database answers (`launchctl print-disabled system`); sshd is socket-activated, so a running
// sshd process proves nothing either way. Recent releases can load Remote Login without any
// override line (submitted by smd), so without a line launchd itself is asked whether the service
// is loaded (`launchctl print system/com.openssh.sshd`: exit 0 loaded, 113 not found). systemsetup
// answers only when launchctl cannot. Screen Sharing and Remote Management are reported as
// evidence. PASS means not exposed: Remote Login whose port-22 sockets (netstat) are all on loopback
// is not exposure.
import { defineCheck, type CheckContext, type CommandResult, type Evidence, type FileResult } from '../types';
import type { Policy } from '../policy';
import { isLoopbackAddress } from '../loopback';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { isHardened, readSshdEffectiveConfig, SSHD, sshdEvidence, type SshdReading } from '../sshd';
import { NETSTAT, NETSTAT_ARGS, parseNetstatListeners, type TcpListener } from './listeners';
import { LAUNCHCTL } from './probes';
import { parseSystemsetup, SYSTEMSETUP } from './systemsetup';

/** kickstart writes "enabled" here when Remote Management (ARD) is switched on. */
const REMOTE_MANAGEMENT_FLAG = '/Library/Application Support/Apple/Remote Desktop/RemoteManagement.launchd';
const SSH_LABEL = 'com.openssh.sshd';
const SCREEN_SHARING_LABEL = 'com.apple.screensharing';

export interface RemoteLoginFacts {
  printDisabled: CommandResult;
  /** `launchctl print system/com.openssh.sshd`, asked when the override database has no line for sshd. */
  printService?: CommandResult;
  /** `systemsetup -getremotelogin`, asked only when launchctl gave no usable answer. */
  systemsetup?: CommandResult;
  remoteManagement: FileResult;
  /** `sshd -G` (effective configuration; no host keys needed), asked only when SSH is on and the policy accepts hardened SSH. */
  sshdConfig?: CommandResult;
  /** `netstat -an -p tcp`: where launchd's sockets actually listen. */
  netstat?: CommandResult;
}

/** SSH's port (launchd's `ssh.plist` socket, service name "ssh") and Screen Sharing's (VNC, 5900). */
const SSH_PORT = 22;
const SCREEN_SHARING_PORT = 5900;

/** Where a port listens: on some network address, on loopback only, or not at all; null when netstat gave no table. */
function portBinding(listeners: TcpListener[] | null, port: number): 'network' | 'loopback' | 'none' | null {
  if (listeners === null) return null;
  const sockets = listeners.filter((l) => l.port === port);
  if (sockets.length === 0) return 'none';
  return sockets.every((l) => isLoopbackAddress(l.address)) ? 'loopback' : 'network';
}

type ServiceState = 'enabled' | 'disabled';

/**
 * The "disabled services" block of `launchctl print-disabled system`: `"label" => disabled|enabled`,
 * or on older releases `=> true|false` (true = disabled). Labels match exactly, so
 * "com.openssh.sshd-agent" is not "com.openssh.sshd". Null when the block is missing.
 */
export function parsePrintDisabled(stdout: string): Map<string, ServiceState> | null {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^disabled services = \{$/.test(l.trim()));
  if (start < 0) return null;
  const services = new Map<string, ServiceState>();
  for (const line of lines.slice(start + 1)) {
    if (/^\}$/.test(line.trim())) return services;
    const m = /^\s*"([^"]+)" => (enabled|disabled|true|false)$/.exec(line);
    if (m) services.set(m[1]!, m[2] === 'disabled' || m[2] === 'true' ? 'disabled' : 'enabled');
  }
  return null;
}

/** launchctl's exit status for `Could not find service "<label>" in domain for system`. */
const SERVICE_NOT_FOUND = 113;

/** `launchctl print system/<label>`: loaded, not loaded, or no answer. */
function parseServicePrint(result: CommandResult, label: string): 'loaded' | 'not_loaded' | undefined {
  if (result.error) return undefined;
  const escaped = label.replace(/\./g, '\\.');
  if (result.exitCode === 0 && new RegExp(`^system/${escaped} = \\{$`, 'm').test(result.stdout)) return 'loaded';
  // The exit status is the stable token; the "Could not find service …" sentence beside it is not.
  return result.exitCode === SERVICE_NOT_FOUND ? 'not_loaded' : undefined;
}

function sshState(
  facts: RemoteLoginFacts,
): { ssh: ServiceState; source: string; screenSharing?: ServiceState } | { reason: CommandFailureReason | 'full_disk_access_required' } {
  const services = facts.printDisabled.error ? null : parsePrintDisabled(facts.printDisabled.stdout);
  if (services) {
    const screenSharing = services.get(SCREEN_SHARING_LABEL) ?? 'disabled';
    const override = services.get(SSH_LABEL);
    if (override) return { ssh: override, source: 'launchctl', screenSharing };
    // No override line: whether launchd has the service loaded is the state in force.
    const loaded = facts.printService ? parseServicePrint(facts.printService, SSH_LABEL) : undefined;
    if (loaded === undefined) return { reason: facts.printService?.error ? commandFailureReason(facts.printService) : 'parse_error' };
    return { ssh: loaded === 'loaded' ? 'enabled' : 'disabled', source: 'launchd_service', screenSharing };
  }
  if (!facts.systemsetup) return { reason: commandFailureReason(facts.printDisabled) };
  const answer = parseSystemsetup(facts.systemsetup, 'Remote Login');
  if (!('value' in answer)) return { reason: answer.reason };
  if (answer.value === 'On' || answer.value === 'Off')
    return { ssh: answer.value === 'On' ? 'enabled' : 'disabled', source: 'systemsetup' };
  return { reason: 'parse_error' };
}

export function evaluateRemoteLogin(facts: RemoteLoginFacts, policy: Policy) {
  const evidence: Evidence = {};
  if (facts.remoteManagement.ok) {
    evidence.remote_management = facts.remoteManagement.text.trim() === 'enabled' ? true : null;
  } else if (facts.remoteManagement.error === 'not_found') {
    evidence.remote_management = false;
  }
  const state = sshState(facts);
  if ('reason' in state) return unknown(state.reason, evidence);
  Object.assign(evidence, { source: state.source, ssh: state.ssh });
  if (state.screenSharing) evidence.screen_sharing = state.screenSharing;
  const listeners =
    facts.netstat && !facts.netstat.error && facts.netstat.exitCode === 0 ? parseNetstatListeners(facts.netstat.stdout) : null;
  const sshListening = portBinding(listeners, SSH_PORT);
  if (sshListening !== null) {
    evidence.ssh_listening = sshListening;
    evidence.screen_sharing_listening = portBinding(listeners, SCREEN_SHARING_PORT);
  }
  if (state.ssh === 'disabled') return pass({ ...evidence, rule: 'ssh_disabled' });
  // launchd's socket decides where sshd answers (its ListenAddress does not): loopback only is not exposure.
  if (sshListening === 'loopback') return pass({ ...evidence, rule: 'loopback_only' });
  if (!policy.remoteLogin.allowSshIfHardened) return fail({ ...evidence, rule: 'ssh_enabled' });

  const config: SshdReading = facts.sshdConfig ? readSshdEffectiveConfig(facts.sshdConfig) : { ok: false, reason: 'parse_error' };
  if (!config.ok) return unknown(config.reason, { ...evidence, step: 'sshd_config' });
  Object.assign(evidence, sshdEvidence(config.settings));
  return isHardened(config.settings) ? pass({ ...evidence, rule: 'ssh_hardened' }) : fail({ ...evidence, rule: 'ssh_not_hardened' });
}

async function collect(ctx: CheckContext): Promise<RemoteLoginFacts> {
  const [printDisabled, remoteManagement, netstat] = await Promise.all([
    ctx.host.run(LAUNCHCTL, ['print-disabled', 'system']),
    ctx.host.readFile(REMOTE_MANAGEMENT_FLAG),
    ctx.host.run(NETSTAT, NETSTAT_ARGS),
  ]);
  const facts: RemoteLoginFacts = { printDisabled, remoteManagement, netstat };
  const services = printDisabled.error ? null : parsePrintDisabled(printDisabled.stdout);
  if (!services) facts.systemsetup = await ctx.host.run(SYSTEMSETUP, ['-getremotelogin']);
  else if (!services.has(SSH_LABEL)) facts.printService = await ctx.host.run(LAUNCHCTL, ['print', `system/${SSH_LABEL}`]);
  const state = sshState(facts);
  if (ctx.policy.remoteLogin.allowSshIfHardened && 'ssh' in state && state.ssh === 'enabled') {
    facts.sshdConfig = await ctx.host.run(SSHD, ['-G']);
  }
  return facts;
}

export const remoteLogin = defineCheck({
  key: 'REMOTE_LOGIN',
  platform: 'DARWIN',
  collect,
  evaluate: (facts, policy) => evaluateRemoteLogin(facts, policy),
});
