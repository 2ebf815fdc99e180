// REMOTE_LOGIN on FreeBSD (research §8.3): PASS means no remote login service is exposed. An
// SSH or telnet listener on a reachable address is a FAIL; so is an sshd that runs and is
// enabled in rc.conf (the research's rule) unless its sockets are seen on loopback only. A
// stopped sshd is a PASS, whatever `service sshd status` exits with. With
// remoteLogin.allowSshIfHardened, an SSH server that refuses passwords, keyboard-interactive
// (PAM) logins and root logins passes.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult, type Evidence } from '../types';
import { isHardened, readSshdEffectiveConfig, SSHD, sshdEvidence, type SshdReading } from '../sshd';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { parseProcessTable, processProbe, runningCommands } from './processes';
import { parseRcVars, rcEvidence, rcProbe } from './rc';
import { isLoopbackAddress } from '../loopback';
import { parseSockstat, type Socket } from './sockstat';

const SOCKSTAT = '/usr/bin/sockstat';
const SOCKSTAT_ARGS = ['-4', '-6', '-l', '-P', 'tcp'] as const;

export interface RemoteLoginFacts {
  sockstat: CommandResult;
  ps: CommandResult;
  rc: CommandResult;
  /** `sshd -T` (effective configuration), only when the policy may accept a hardened SSH server. */
  sshdConfig?: CommandResult;
}

async function collectRemoteLogin(ctx: CheckContext): Promise<RemoteLoginFacts> {
  const [sockstat, ps, rc, sshdConfig] = await Promise.all([
    ctx.host.run(SOCKSTAT, SOCKSTAT_ARGS),
    processProbe(ctx),
    rcProbe(ctx),
    ctx.policy.remoteLogin.allowSshIfHardened ? ctx.host.run(SSHD, ['-T']) : undefined,
  ]);
  return { sockstat, ps, rc, ...(sshdConfig ? { sshdConfig } : {}) };
}

const isSsh = (s: Socket) => ['sshd', 'dropbear'].includes(s.command) || s.port === 22;
const isTelnet = (s: Socket) => s.command === 'telnetd' || s.port === 23;
/**
 * Remote desktop is remote login: xrdp (its own port, 3389 by default) and VNC servers on the RFB
 * ports of displays :0–:99 (5900–5999). Xvnc's Java-viewer HTTP port (58xx) and X11 over TCP
 * (60xx) are not logins by themselves.
 */
const isRemoteDesktop = (s: Socket) => s.command === 'xrdp' || s.port === 3389 || (s.port !== null && s.port >= 5900 && s.port <= 5999);

function hardeningVerdict<Exposed extends string>(facts: RemoteLoginFacts, evidence: Evidence, exposure: Exposed) {
  const config: SshdReading = facts.sshdConfig ? readSshdEffectiveConfig(facts.sshdConfig) : { ok: false, reason: 'check_error' };
  if (!config.ok) return unknown(config.reason, { ...evidence, rule: exposure });
  const details = { ...evidence, ...sshdEvidence(config.settings) };
  return isHardened(config.settings) ? pass({ ...details, rule: 'ssh_hardened' }) : fail({ ...details, rule: exposure });
}

function evaluateRemoteLogin(facts: RemoteLoginFacts, policy: Policy) {
  const rc = parseRcVars(facts.rc);
  const evidence: Evidence = { source: 'sockstat', rc_enabled: rcEvidence(rc, 'sshd_enable') };
  if (facts.sockstat.error || facts.sockstat.exitCode !== 0) return unknown(commandFailureReason(facts.sockstat), evidence);
  const table = parseSockstat(facts.sockstat.stdout);
  if (!table) return unknown('parse_error', evidence);
  if (table.unparsedLines.length > 0) evidence.unrecognized_lines = table.unparsedLines;
  const ssh = table.sockets.filter(isSsh);
  const telnet = table.sockets.filter(isTelnet);
  const sshExposed = ssh.some((s) => !isLoopbackAddress(s.address));
  const telnetExposed = telnet.some((s) => !isLoopbackAddress(s.address));
  const desktopExposed = table.sockets.some((s) => isRemoteDesktop(s) && !isLoopbackAddress(s.address));
  const ps = parseProcessTable(facts.ps);
  const sshdRunning = ps.ok ? runningCommands(ps.processes).has('sshd') : null;
  Object.assign(evidence, {
    ssh_listening: sshExposed,
    ssh_listening_loopback_only: ssh.length > 0 && !sshExposed,
    telnet_listening: telnetExposed,
    remote_desktop_listening: desktopExposed,
    sshd_running: sshdRunning,
  });
  const verdict = exposureVerdict(facts, policy, evidence, {
    ssh,
    sshExposed,
    telnetExposed,
    desktopExposed,
    sshdRunning,
    sshdEnabled: rcEvidence(rc, 'sshd_enable') === true,
  });
  // sockstat hides other users' sockets under the same rule that hides their processes: a view
  // that cannot see root's listeners proves exposure, never its absence.
  if (verdict.status === 'PASS' && !ps.ok && ps.reason === 'process_table_partial') return unknown(ps.reason, evidence);
  // A row sockstat printed that could not be read may be a listener: what the readable rows show
  // exposed stands, but nothing rests on a socket's absence (a PASS, sshd running with no socket seen).
  if (table.unparsedLines.length > 0 && (verdict.status === 'PASS' || verdict.evidence.rule === 'running_enabled')) {
    return unknown('unrecognized_lines', evidence);
  }
  return verdict;
}

interface Exposure {
  ssh: Socket[];
  sshExposed: boolean;
  telnetExposed: boolean;
  desktopExposed: boolean;
  sshdRunning: boolean | null;
  sshdEnabled: boolean;
}

function exposureVerdict(facts: RemoteLoginFacts, policy: Policy, evidence: Evidence, e: Exposure) {
  const hardenedAllowed = policy.remoteLogin.allowSshIfHardened;
  if (e.telnetExposed) return fail({ ...evidence, rule: 'telnet_listening' });
  if (e.desktopExposed) return fail({ ...evidence, rule: 'remote_desktop_listening' });
  if (e.sshExposed) return hardenedAllowed ? hardeningVerdict(facts, evidence, 'listening') : fail({ ...evidence, rule: 'listening' });
  if (e.sshdRunning === true && e.sshdEnabled && e.ssh.length === 0) {
    return hardenedAllowed ? hardeningVerdict(facts, evidence, 'running_enabled') : fail({ ...evidence, rule: 'running_enabled' });
  }
  return pass({ ...evidence, rule: e.ssh.length > 0 ? 'loopback_only' : 'not_listening' });
}

export const remoteLoginCheck = defineCheck({
  key: 'REMOTE_LOGIN',
  platform: 'FREEBSD',
  collect: collectRemoteLogin,
  evaluate: (facts, policy) => evaluateRemoteLogin(facts, policy),
});
