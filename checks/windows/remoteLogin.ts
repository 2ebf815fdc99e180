// REMOTE_LOGIN on Windows (research §8.4): exposure, so PASS means nothing remote is open. Remote
// Desktop from fDenyTSConnections (Group Policy key first, then the local key; absent = denied),
// TermService and a listener on the RDP-Tcp port; the OpenSSH Server service (sshd); Windows Remote
// Management (WinRM, PowerShell remoting: on by default on every Windows Server) listening on 5985
// or 5986. A listener bound only to loopback is not exposure. NLA is evidence only. With
// policy.remoteLogin.allowSshIfHardened, a running sshd whose configuration refuses passwords passes.
import * as z from 'zod/mini';
import type { Policy } from '../policy';
import { isLoopbackAddress } from '../loopback';
import { sshdConfigDirectives } from '../sshd';
import type { Evidence, FileResult } from '../types';
import { fsFailureReason, fail, pass, unknown } from '../verdict';
import {
  defineProbeCheck,
  probeSection,
  probeServices,
  registryKey,
  sectionUnknown,
  serviceState,
  startType,
  type Section,
  type ServiceFacts,
} from './probe';
import { regNumber, type RegistryValues } from './registry';

/** OpenSSH for Windows reads its server configuration here. */
export const SSHD_CONFIG = 'C:\\ProgramData\\ssh\\sshd_config';
const DEFAULT_RDP_PORT = 3389;
const WINRM_PORTS = [5985, 5986];

/** A TCP listener (Get-NetTCPConnection LocalAddress, LocalPort). */
const Listener = z.object({ Address: z.string(), Port: z.int() });
type Listener = z.infer<typeof Listener>;

/** Ports with at least one listener reachable from the network. */
function exposedPorts(listeners: Listener[]): Set<number> {
  return new Set(listeners.filter((l) => !isLoopbackAddress(l.Address)).map((l) => l.Port));
}

export interface RemoteLoginFacts {
  rdpPolicy: Section<RegistryValues | null>;
  rdp: Section<RegistryValues | null>;
  rdpTcp: Section<RegistryValues | null>;
  services: Section<ServiceFacts[]>;
  listeningPorts: Section<Listener[]>;
  /** Read only when sshd runs and the policy accepts a hardened SSH server. */
  sshdConfig: FileResult | null;
}

/**
 * Whether sshd accepts passwords: the first PasswordAuthentication before any Match block wins
 * (sshd's rule); absent means yes (OpenSSH's default). Null when the value is not yes/no.
 */
export function sshdAcceptsPasswords(config: string): boolean | null {
  const directive = sshdConfigDirectives(config).find((d) => d.keyword === 'passwordauthentication');
  if (!directive) return true;
  const value = directive.value.toLowerCase();
  return value === 'yes' ? true : value === 'no' ? false : null;
}

export function evaluateRemoteLogin(facts: RemoteLoginFacts, policy: Policy) {
  const evidence: Evidence = { source: 'registry' };
  const { rdpPolicy, rdp, rdpTcp, services, listeningPorts } = facts;
  if (!rdpPolicy.ok) return sectionUnknown(rdpPolicy, evidence);
  if (!rdp.ok) return sectionUnknown(rdp, evidence);
  if (!services.ok) return sectionUnknown(services, evidence);

  const managedDeny = regNumber(rdpPolicy.value, 'fDenyTSConnections');
  const deny = managedDeny === null ? regNumber(rdp.value, 'fDenyTSConnections') : managedDeny;
  if (deny === 'invalid' || (deny !== null && deny !== 0 && deny !== 1))
    return unknown('unexpected_value', { ...evidence, value: 'fDenyTSConnections' });
  const rdpAllowed = deny === 0;
  evidence.rdp_allowed = rdpAllowed;
  evidence.rdp_policy_managed = managedDeny !== null;

  const port = rdpTcp.ok ? regNumber(rdpTcp.value, 'PortNumber') : 'invalid';
  const rdpPort = typeof port === 'number' ? port : DEFAULT_RDP_PORT;
  const nla = regNumber(rdpPolicy.value, 'UserAuthentication') ?? (rdpTcp.ok ? regNumber(rdpTcp.value, 'UserAuthentication') : 'invalid');
  if (nla === 0 || nla === 1) evidence.rdp_nla = nla === 1;

  const ports = listeningPorts.ok ? exposedPorts(listeningPorts.value) : null;
  const rdpListening = ports === null ? null : ports.has(rdpPort);
  evidence.rdp_listening = rdpListening;
  const winrmListening = ports === null ? null : WINRM_PORTS.some((p) => ports.has(p));
  evidence.winrm_listening = winrmListening;
  if (listeningPorts.ok) {
    const loopbackOnly = [rdpPort, 22, ...WINRM_PORTS].filter((p) => !ports!.has(p) && listeningPorts.value.some((l) => l.Port === p));
    if (loopbackOnly.length > 0) evidence.loopback_only_ports = loopbackOnly;
  }

  const service = (name: string) => services.value.find((s) => s.Name === name);
  const termService = service('TermService');
  const termServiceRunning = termService !== undefined && serviceState(termService) === 'running';
  evidence.termservice = termService ? serviceState(termService) : 'not_installed';
  const sshd = service('sshd');
  evidence.openssh_server = sshd ? serviceState(sshd) : 'not_installed';
  if (sshd) evidence.openssh_server_start = startType(sshd);
  const winrm = service('WinRM');
  evidence.winrm = winrm ? serviceState(winrm) : 'not_installed';

  if (rdpAllowed && (termServiceRunning || rdpListening === true)) return fail({ ...evidence, rule: 'rdp_enabled' });
  if (termServiceRunning && rdpListening === true) return fail({ ...evidence, rule: 'rdp_listening' });
  if (winrmListening === true) return fail({ ...evidence, rule: 'winrm_listening' });
  // WinRM running with its listeners out of sight: it may well be listening (a Windows Server default).
  const unseenWinrm = winrm !== undefined && serviceState(winrm) === 'running' && !listeningPorts.ok ? listeningPorts : null;
  const nothingElseOpen = <Word extends string>(rule: Word) =>
    unseenWinrm ? sectionUnknown(unseenWinrm, { ...evidence, value: 'listeners' }) : pass({ ...evidence, rule });

  if (sshd && serviceState(sshd) === 'running') {
    if (!policy.remoteLogin.allowSshIfHardened) return fail({ ...evidence, rule: 'sshd_running' });
    if (facts.sshdConfig === null) return unknown('check_error', evidence);
    if (!facts.sshdConfig.ok) return unknown(fsFailureReason(facts.sshdConfig.error), { ...evidence, value: 'sshd_config' });
    const passwords = sshdAcceptsPasswords(facts.sshdConfig.text);
    if (passwords === null) return unknown('unexpected_value', { ...evidence, value: 'PasswordAuthentication' });
    evidence.ssh_password_authentication = passwords;
    if (passwords) return fail({ ...evidence, rule: 'sshd_accepts_passwords' });
    return nothingElseOpen('ssh_hardened');
  }
  // RDP allowed but TermService (which hosts the listener) not running: not reachable now (research §8.4).
  return nothingElseOpen('no_remote_login');
}

export const remoteLoginCheck = defineProbeCheck(
  'REMOTE_LOGIN',
  async (probe, ctx): Promise<RemoteLoginFacts> => {
    const services = probeServices(probe);
    const sshdRunning = services.ok && services.value.some((s) => s.Name === 'sshd' && serviceState(s) === 'running');
    return {
      rdpPolicy: registryKey(probe, 'rdpPolicy'),
      rdp: registryKey(probe, 'rdp'),
      rdpTcp: registryKey(probe, 'rdpTcp'),
      services,
      listeningPorts: probeSection(probe, 'listeningPorts', z.array(Listener)),
      sshdConfig: sshdRunning && ctx.policy.remoteLogin.allowSshIfHardened ? await ctx.host.readFile(SSHD_CONFIG) : null,
    };
  },
  (facts, policy) => evaluateRemoteLogin(facts, policy),
);
