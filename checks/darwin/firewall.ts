// FIREWALL_ENABLED on macOS (research §3.1): the Application Layer Firewall's live state from
// socketfilterfw, whose "(State = N)" number decides. The com.apple.alf plist is not read: macOS 15
// stopped keeping the state there. A configuration profile's EnableFirewall is intent, never the
// verdict: socketfilterfw still reports the global state on a Mac with a firewall profile (its
// refusal is for setters and some getters), so without that state the check says UNKNOWN and keeps
// the profile's setting as evidence.
import { defineCheck, type CommandResult, type Evidence } from '../types';
import { commandFailureReason, fail, pass, unknown } from '../verdict';
import { plistBool } from './plist';
import { MANAGED_PREFERENCES, readPlistFile, type PlistFile } from './probes';

const SOCKETFILTERFW = '/usr/libexec/ApplicationFirewall/socketfilterfw';
const MANAGED_FIREWALL = `${MANAGED_PREFERENCES}/com.apple.security.firewall.plist`;

export interface FirewallFacts {
  /** `socketfilterfw --getglobalstate --getstealthmode --getblockall`: one line per getter. */
  socketfilterfw: CommandResult;
  managed: PlistFile;
}

export interface FirewallStatus {
  /** 0 = off, 1 = on, 2 = on and blocking all incoming connections. */
  globalState?: 0 | 1 | 2;
  stealth?: boolean;
  blockAll?: boolean;
  /** "Firewall settings cannot be modified from command line on managed Mac computers." */
  refusedAsManaged: boolean;
}

/**
 * "(State = N)" decides wherever the getglobalstate sentence puts it: Apple rewords the sentence
 * ("Firewall is enabled.", "Firewall is blocking all non-essential incoming connections." for the
 * strictest setting). Without a number only the plain enabled/disabled sentence counts.
 */
const STATE_NUMBER = /^Firewall is [^()]*\(State = ([012])\)$/;
const GLOBAL_STATE = /^Firewall is (enabled|disabled)\.$/;
const STEALTH = /^(?:Firewall stealth mode is (on|off)|Stealth mode (enabled|disabled))$/;
/** The block-all getter's answers; "blocking all non-essential" without a number is that getter's "on". */
const BLOCK_ALL =
  /^(?:Firewall has block all state set to (enabled|disabled)\.|Block all (ENABLED|DISABLED)!|Firewall is (blocking) all non-essential incoming connections\.)$/;
const MANAGED_REFUSAL = /^Firewall settings cannot be modified from command line on managed Mac computers\.$/;

export function parseSocketfilterfw(stdout: string): FirewallStatus {
  const status: FirewallStatus = { refusedAsManaged: false };
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = STATE_NUMBER.exec(line))) status.globalState = Number(m[1]) as 0 | 1 | 2;
    else if ((m = GLOBAL_STATE.exec(line))) status.globalState ??= m[1] === 'enabled' ? 1 : 0;
    else if ((m = STEALTH.exec(line))) status.stealth = m[1] === 'on' || m[2] === 'enabled';
    else if ((m = BLOCK_ALL.exec(line))) status.blockAll = m[1] === 'enabled' || m[2] === 'ENABLED' || m[3] !== undefined;
    else if (MANAGED_REFUSAL.test(line)) status.refusedAsManaged = true;
  }
  return status;
}

export function evaluateFirewall(facts: FirewallFacts) {
  const run = facts.socketfilterfw;
  const status = run.error ? undefined : parseSocketfilterfw(run.stdout);
  const managedEnable = facts.managed.state === 'present' ? plistBool(facts.managed.dict.EnableFirewall) : undefined;
  const evidence: Evidence = { managed: facts.managed.state === 'present' };
  // The profile's setting is evidence only: the payload asks for the firewall, socketfilterfw says whether it is on.
  if (managedEnable !== undefined) evidence.enable_firewall = managedEnable;
  if (status?.stealth !== undefined) evidence.stealth = status.stealth;
  if (status?.blockAll !== undefined) evidence.block_all = status.blockAll;

  if (status?.globalState !== undefined) {
    Object.assign(evidence, { source: 'socketfilterfw', global_state: status.globalState });
    return status.globalState === 0 ? fail({ ...evidence, rule: 'firewall_off' }) : pass({ ...evidence, rule: 'firewall_on' });
  }
  if (status?.refusedAsManaged) return unknown('managed_refused', { ...evidence, source: 'socketfilterfw' });
  return unknown(run.error ? commandFailureReason(run) : 'parse_error', { ...evidence, source: 'socketfilterfw' });
}

export const firewall = defineCheck({
  key: 'FIREWALL_ENABLED',
  platform: 'DARWIN',
  async collect(ctx): Promise<FirewallFacts> {
    const [socketfilterfw, managed] = await Promise.all([
      ctx.host.run(SOCKETFILTERFW, ['--getglobalstate', '--getstealthmode', '--getblockall']),
      readPlistFile(ctx, MANAGED_FIREWALL),
    ]);
    return { socketfilterfw, managed };
  },
  evaluate: (facts) => evaluateFirewall(facts),
});
