// FIREWALL_ENABLED on Linux (research §3.2): an inbound packet filter is active. The kernel's
// ruleset (nftables, plus legacy iptables when its tables are loaded) is the truth; without the nft
// tool, iptables-nft reads the nf_tables tables made through iptables (ufw's and most others'). The
// front-ends (firewalld, ufw) are reported and never decide: firewalld's `--state` "running" says its
// last start or reload applied its rules (fw.py sets RUNNING then, and never reads the kernel
// again), ufw's "Status: active" that its `ufw-user-input` chain exists (`iptables -L`), not that
// input is dropped. Every backend is consulted, so an installed-but-inactive ufw cannot hide an
// active nftables ruleset.
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
const IPTABLES_NFT = '/usr/sbin/iptables-nft';
const IP6TABLES_NFT = '/usr/sbin/ip6tables-nft';
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
  /** nf_tables read through iptables-nft -S, only when the nft tool is missing (it shows no table made by nft itself). */
  iptablesNft: { ipv4: View<boolean> | 'not_read'; ipv6: View<boolean> | 'not_read' };
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

/**
 * The binary that reads one variant's tables: its own (iptables-legacy, iptables-nft), or a plain
 * iptables whose -V names that variant (before 1.8 there was only legacy, and -V named none).
 */
async function variantBinary(ctx: CheckContext, variant: 'legacy' | 'nf_tables', own: string, plain: string): Promise<string | undefined> {
  const dedicated = await findTool(ctx.host, own);
  if (dedicated) return dedicated;
  const found = await findTool(ctx.host, plain);
  const version = await ctx.host.run(found ?? plain, ['-V']);
  if (version.error || version.exitCode !== 0) return undefined;
  const said = /\((legacy|nf_tables)\)/.exec(version.stdout)?.[1] ?? 'legacy';
  return said === variant ? (found ?? plain) : undefined;
}

async function legacyView(ctx: CheckContext, tablesFile: string, legacy: string, plain: string): Promise<View<boolean> | 'not_loaded'> {
  const tables = await ctx.host.readFile(tablesFile);
  if (tables.ok && !tables.text.split('\n').includes('filter')) return 'not_loaded';
  if (!tables.ok && tables.error === 'not_found') return 'not_loaded';
  return iptablesView(ctx, await variantBinary(ctx, 'legacy', legacy, plain));
}

async function iptablesNftView(ctx: CheckContext, own: string, plain: string): Promise<View<boolean> | 'not_read'> {
  const binary = await variantBinary(ctx, 'nf_tables', own, plain);
  return binary ? iptablesView(ctx, binary) : 'not_read';
}

/** `-S` of the filter table: whether its INPUT chain drops unsolicited traffic. */
async function iptablesView(ctx: CheckContext, binary: string | undefined): Promise<View<boolean>> {
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
  const [nft4, nft6] =
    nft.state === 'unavailable' && nft.reason === 'command_not_found'
      ? await Promise.all([iptablesNftView(ctx, IPTABLES_NFT, IPTABLES), iptablesNftView(ctx, IP6TABLES_NFT, IP6TABLES)])
      : (['not_read', 'not_read'] as const);
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
    iptablesNft: { ipv4: nft4, ipv6: nft6 },
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

  const { nft, legacy, iptablesNft } = facts;
  const on = (v: View<boolean> | 'not_loaded' | 'not_read') => typeof v === 'object' && v.state === 'ok' && v.value;
  const legacyKnown = (v: View<boolean> | 'not_loaded') => v === 'not_loaded' || v.state === 'ok';
  if (legacy.ipv4 !== 'not_loaded' || legacy.ipv6 !== 'not_loaded') evidence.legacy_iptables = true;
  const nftRead = [iptablesNft.ipv4, iptablesNft.ipv6].some((v) => v !== 'not_read' && v.state === 'ok');
  if (nftRead) Object.assign(evidence, { source: 'iptables-nft', iptables_nft: true });
  if (nft.state === 'ok') {
    Object.assign(evidence, {
      input_chains: nft.value.inputChains,
      input_policy: nft.value.inputPolicy,
      input_rules: nft.value.inputRules,
    });
  }
  const ipv4 = (nft.state === 'ok' && nft.value.ipv4) || on(legacy.ipv4) || on(iptablesNft.ipv4);
  const ipv6 = (nft.state === 'ok' && nft.value.ipv6) || on(legacy.ipv6) || on(iptablesNft.ipv6);
  Object.assign(evidence, { ipv4_filtered: ipv4, ipv6_filtered: ipv6 });
  const complete = nft.state === 'ok' && legacyKnown(legacy.ipv4) && legacyKnown(legacy.ipv6);

  if (ipv4 && (ipv6 || !facts.ipv6Enabled)) return pass({ ...evidence, rule: 'inbound_filtered' });
  // An active front-end whose rules this reading does not see filtering (its drop behind a
  // conditional rule, a verdict map or a table this reading does not know) contradicts the
  // ruleset: neither side proves the other wrong.
  // Unless the kernel holds no input rule at all (and no legacy table): then nothing can drop,
  // whatever the manager reports (its rules flushed, or never loaded since a reboot).
  const nothingLoaded = nft.state === 'ok' && nft.value.inputRules === 0 && legacy.ipv4 === 'not_loaded' && legacy.ipv6 === 'not_loaded';
  if (complete && managers.length > 0 && nothingLoaded) return fail({ ...evidence, rule: 'manager_rules_not_loaded' });
  if (complete && managers.length > 0) return unknown('manager_ruleset_mismatch', evidence);
  if (complete) return fail({ ...evidence, rule: ipv4 ? 'ipv6_unfiltered' : 'no_inbound_filtering' });
  // The ruleset is not (fully) readable. An active front-end's report is not its effect (see the
  // top): it is evidence, and the verdict says the rules could not be confirmed (issue 32).
  const unread = nft.state === 'unavailable' ? nft.reason : 'legacy_iptables_unreadable';
  if (managers.length > 0) {
    const zone = facts.firewalld.defaultZone ? { default_zone: facts.firewalld.defaultZone } : {};
    return unknown('manager_unconfirmed', { ...evidence, ...zone, ruleset_error: unread });
  }
  if (unread !== 'command_not_found') return unknown(unread, evidence);
  // Without nft, iptables-nft's view misses tables made by nft itself: no filtering there is not a FAIL.
  return unknown(nftRead ? 'nftables_unreadable' : 'no_firewall_tooling', evidence);
}

export const firewall = defineCheck({ key: 'FIREWALL_ENABLED', platform: 'LINUX', collect, evaluate });
