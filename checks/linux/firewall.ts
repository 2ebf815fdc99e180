// FIREWALL_ENABLED on Linux (research §3.2): an inbound packet filter is active. The kernel's
// ruleset (nftables, plus legacy iptables when its tables are loaded) is the truth; front-ends
// (firewalld, ufw) are reported and decide only when the ruleset cannot be read. Every backend is
// consulted, so an installed-but-inactive ufw cannot hide an active nftables ruleset.
import type { Policy } from '../policy';
import { defineCheck, type CheckContext, type CommandResult } from '../types';
import { commandFailureReason, fail, pass, unknown, type CommandFailureReason } from '../verdict';
import { containerEvidence, containerFacts, containerVerdict, type ContainerFacts } from './container';
import { findTool, runTool } from './tools';
import { analyzeIptablesInput, analyzeNftRuleset, type InputFiltering } from './firewallRules';

const NFT = '/usr/sbin/nft';
const IPTABLES_LEGACY = '/usr/sbin/iptables-legacy';
const IP6TABLES_LEGACY = '/usr/sbin/ip6tables-legacy';
const IPTABLES = '/usr/sbin/iptables';
const IP6TABLES = '/usr/sbin/ip6tables';
const UFW = '/usr/sbin/ufw';
const FIREWALL_CMD = '/usr/bin/firewall-cmd';
/** firewalld's errors.NOT_RUNNING, firewall-cmd's exit status when no daemon answers. */
const FIREWALLD_NOT_RUNNING = 252;

type View<T> = { state: 'ok'; value: T } | { state: 'unavailable'; reason: CommandFailureReason };

export interface FirewallFacts {
  container: ContainerFacts;
  nft: View<InputFiltering>;
  /** Legacy iptables input filtering, only looked at when its filter tables are loaded. */
  legacy: { ipv4: View<boolean> | 'not_loaded'; ipv6: View<boolean> | 'not_loaded' };
  ipv6Enabled: boolean;
  ufw: 'active' | 'inactive' | 'unavailable';
  /** The default zone is asked of a running firewalld only. */
  firewalld: { state: 'running'; defaultZone?: string } | { state: 'not_running' | 'unavailable'; defaultZone?: never };
}

function unavailable(result: CommandResult): { state: 'unavailable'; reason: CommandFailureReason } {
  if (!result.error && /Operation not permitted|Permission denied|must be root|need to be root/i.test(result.stderr)) {
    return { state: 'unavailable', reason: 'permission_denied' };
  }
  return { state: 'unavailable', reason: commandFailureReason(result) };
}

/** The binary that reads legacy tables: iptables-legacy, or a plain iptables that is the legacy variant (before 1.8 all were). */
async function legacyBinary(ctx: CheckContext, legacy: string, plain: string): Promise<string | undefined> {
  const dedicated = await findTool(ctx.host, legacy);
  if (dedicated) return dedicated;
  const found = await findTool(ctx.host, plain);
  const version = await ctx.host.run(found ?? plain, ['-V']);
  if (version.error || version.exitCode !== 0) return undefined;
  const variant = /\((legacy|nf_tables)\)/.exec(version.stdout)?.[1];
  return variant === 'nf_tables' ? undefined : (found ?? plain);
}

async function legacyView(ctx: CheckContext, tablesFile: string, legacy: string, plain: string): Promise<View<boolean> | 'not_loaded'> {
  const tables = await ctx.host.readFile(tablesFile);
  if (tables.ok && !tables.text.split('\n').includes('filter')) return 'not_loaded';
  if (!tables.ok && tables.error === 'not_found') return 'not_loaded';
  const binary = await legacyBinary(ctx, legacy, plain);
  if (!binary) return { state: 'unavailable', reason: 'command_not_found' };
  const result = await ctx.host.run(binary, ['-S']);
  if (result.error || result.exitCode !== 0) return unavailable(result);
  const parsed = analyzeIptablesInput(result.stdout);
  return parsed.ok ? { state: 'ok', value: parsed.filters } : { state: 'unavailable', reason: 'parse_error' };
}

async function collect(ctx: CheckContext): Promise<FirewallFacts> {
  const { host } = ctx;
  const [container, nftResult, legacy4, legacy6, inet6, ufwResult, firewalldState] = await Promise.all([
    containerFacts(ctx),
    runTool(host, NFT, ['-j', 'list', 'ruleset']),
    legacyView(ctx, '/proc/net/ip_tables_names', IPTABLES_LEGACY, IPTABLES),
    legacyView(ctx, '/proc/net/ip6_tables_names', IP6TABLES_LEGACY, IP6TABLES),
    host.readFile('/proc/net/if_inet6'),
    runTool(host, UFW, ['status']),
    runTool(host, FIREWALL_CMD, ['--state']),
  ]);
  let nft: View<InputFiltering>;
  if (nftResult.error || nftResult.exitCode !== 0) nft = unavailable(nftResult);
  else {
    const parsed = analyzeNftRuleset(nftResult.stdout);
    nft = parsed.ok ? { state: 'ok', value: parsed.filtering } : { state: 'unavailable', reason: 'parse_error' };
  }
  const status = /^Status:\s+(active|inactive)\s*$/m.exec(ufwResult.stdout)?.[1];
  let firewalld: FirewallFacts['firewalld'] = { state: 'unavailable' };
  // firewall-cmd --state (firewalld's src/firewall-cmd.in) answers by its exit status: 0 with
  // "running"; 252 (NOT_RUNNING) with "not running" on stderr, as every status above 1 is printed;
  // 251 for a daemon that failed to apply its rules, 253 for a refused authorization.
  if (firewalldState.exitCode === 0) {
    const zone = await runTool(host, FIREWALL_CMD, ['--get-default-zone']);
    const name = zone.stdout.trim();
    firewalld =
      !zone.error && zone.exitCode === 0 && /^[\w-]+$/.test(name) ? { state: 'running', defaultZone: name } : { state: 'running' };
  } else if (firewalldState.exitCode === FIREWALLD_NOT_RUNNING) firewalld = { state: 'not_running' };
  return {
    container,
    nft,
    legacy: { ipv4: legacy4, ipv6: legacy6 },
    // Any interface besides loopback with an IPv6 address can receive IPv6.
    ipv6Enabled: inet6.ok && inet6.text.split('\n').some((l) => l.trim() !== '' && l.trim().split(/\s+/).at(-1) !== 'lo'),
    ufw: status === 'active' || status === 'inactive' ? status : 'unavailable',
    firewalld,
  };
}

function evaluate(facts: FirewallFacts, policy: Policy) {
  const inContainer = containerVerdict(facts.container, policy);
  if (inContainer) return inContainer;
  const managers = [...(facts.firewalld.state === 'running' ? ['firewalld'] : []), ...(facts.ufw === 'active' ? ['ufw'] : [])];
  const evidence: Record<string, unknown> = {
    source: 'nftables',
    managers,
    ufw: facts.ufw,
    firewalld: facts.firewalld.state,
    ipv6_enabled: facts.ipv6Enabled,
    ...containerEvidence(facts.container),
  };
  // A trusted default zone accepts everything whatever the ruleset's shape.
  if (facts.firewalld.defaultZone === 'trusted')
    return fail({ ...evidence, source: 'firewalld', default_zone: 'trusted', rule: 'zone_accept_all' });

  const { nft, legacy } = facts;
  const legacyOn = (v: View<boolean> | 'not_loaded') => v !== 'not_loaded' && v.state === 'ok' && v.value;
  const legacyKnown = (v: View<boolean> | 'not_loaded') => v === 'not_loaded' || v.state === 'ok';
  if (legacy.ipv4 !== 'not_loaded' || legacy.ipv6 !== 'not_loaded') evidence.legacy_iptables = true;
  if (nft.state === 'ok') {
    Object.assign(evidence, { input_chains: nft.value.inputChains, input_policy: nft.value.inputPolicy });
  }
  const ipv4 = (nft.state === 'ok' && nft.value.ipv4) || legacyOn(legacy.ipv4);
  const ipv6 = (nft.state === 'ok' && nft.value.ipv6) || legacyOn(legacy.ipv6);
  Object.assign(evidence, { ipv4_filtered: ipv4, ipv6_filtered: ipv6 });
  const complete = nft.state === 'ok' && legacyKnown(legacy.ipv4) && legacyKnown(legacy.ipv6);

  if (ipv4 && (ipv6 || !facts.ipv6Enabled)) return pass({ ...evidence, rule: 'inbound_filtered' });
  // An active front-end whose rules this reading does not see filtering (its drop behind a
  // conditional rule, a verdict map or a table this reading does not know) contradicts the
  // ruleset: neither side proves the other wrong.
  if (complete && managers.length > 0) return unknown('manager_ruleset_mismatch', evidence);
  if (complete) return fail({ ...evidence, rule: ipv4 ? 'ipv6_unfiltered' : 'no_inbound_filtering' });
  // The ruleset is not (fully) readable: an active front-end is the best remaining evidence.
  if (facts.ufw === 'active') return pass({ ...evidence, source: 'ufw', rule: 'manager_active' });
  if (facts.firewalld.defaultZone) {
    return pass({ ...evidence, source: 'firewalld', default_zone: facts.firewalld.defaultZone, rule: 'manager_active' });
  }
  const reason =
    nft.state === 'unavailable' ? (nft.reason === 'command_not_found' ? 'no_firewall_tooling' : nft.reason) : 'legacy_iptables_unreadable';
  return unknown(reason, evidence);
}

export const firewall = defineCheck({ key: 'FIREWALL_ENABLED', platform: 'LINUX', collect, evaluate });
