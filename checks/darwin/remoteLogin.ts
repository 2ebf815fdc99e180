// REMOTE_LOGIN on macOS (research §8.1): is Remote Login (SSH) switched on? launchd's override
// database answers (`launchctl print-disabled system`); sshd is socket-activated, so a running
// sshd process proves nothing either way. systemsetup answers only when launchctl cannot. Screen
// Sharing and Remote Management are reported as evidence. PASS means not exposed.
import { defineCheck, type CheckContext, type CommandResult, type Evidence, type FileResult, type Verdict } from '../types';
import type { Policy } from '../policy';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { isHardened, readSshdEffectiveConfig, SSHD, sshdEvidence, type SshdReading } from '../sshd';
import { parseSystemsetup, SYSTEMSETUP } from './systemsetup';

export const LAUNCHCTL = '/bin/launchctl';
/** kickstart writes "enabled" here when Remote Management (ARD) is switched on. */
export const REMOTE_MANAGEMENT_FLAG = '/Library/Application Support/Apple/Remote Desktop/RemoteManagement.launchd';
const SSH_LABEL = 'com.openssh.sshd';
const SCREEN_SHARING_LABEL = 'com.apple.screensharing';

export interface RemoteLoginFacts {
  printDisabled: CommandResult;
  /** `systemsetup -getremotelogin`, asked only when launchctl gave no usable answer. */
  systemsetup?: CommandResult;
  remoteManagement: FileResult;
  /** `sshd -G` (effective configuration; no host keys needed), asked only when SSH is on and the policy accepts hardened SSH. */
  sshdConfig?: CommandResult;
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

function sshState(facts: RemoteLoginFacts): { ssh: ServiceState; source: string; screenSharing?: ServiceState } | { reason: string } {
  const services = facts.printDisabled.error ? null : parsePrintDisabled(facts.printDisabled.stdout);
  if (services) {
    // No override line: the launchd plist's own Disabled key applies, and Apple ships both services disabled.
    return {
      ssh: services.get(SSH_LABEL) ?? 'disabled',
      source: services.has(SSH_LABEL) ? 'launchctl' : 'launchd_default',
      screenSharing: services.get(SCREEN_SHARING_LABEL) ?? 'disabled',
    };
  }
  if (!facts.systemsetup) return { reason: commandFailureReason(facts.printDisabled) };
  const answer = parseSystemsetup(facts.systemsetup, 'Remote Login');
  if (!('value' in answer)) return { reason: answer.reason };
  if (answer.value === 'On' || answer.value === 'Off') return { ssh: answer.value === 'On' ? 'enabled' : 'disabled', source: 'systemsetup' };
  return { reason: 'parse_error' };
}

export function evaluateRemoteLogin(facts: RemoteLoginFacts, policy: Policy): Verdict {
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
  if (state.ssh === 'disabled') return pass({ ...evidence, rule: 'ssh_disabled' });
  if (!policy.remoteLogin.allowSshIfHardened) return fail({ ...evidence, rule: 'ssh_enabled' });

  const config: SshdReading = facts.sshdConfig ? readSshdEffectiveConfig(facts.sshdConfig) : { ok: false, reason: 'parse_error' };
  if (!config.ok) return unknown(config.reason, { ...evidence, step: 'sshd_config' });
  Object.assign(evidence, sshdEvidence(config.settings));
  return isHardened(config.settings) ? pass({ ...evidence, rule: 'ssh_hardened' }) : fail({ ...evidence, rule: 'ssh_not_hardened' });
}

async function collect(ctx: CheckContext): Promise<RemoteLoginFacts> {
  const [printDisabled, remoteManagement] = await Promise.all([
    ctx.host.run(LAUNCHCTL, ['print-disabled', 'system']),
    ctx.host.readFile(REMOTE_MANAGEMENT_FLAG),
  ]);
  const facts: RemoteLoginFacts = { printDisabled, remoteManagement };
  const services = printDisabled.error ? null : parsePrintDisabled(printDisabled.stdout);
  if (!services) facts.systemsetup = await ctx.host.run(SYSTEMSETUP, ['-getremotelogin']);
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
