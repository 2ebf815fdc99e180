// FIREWALL_ENABLED on Windows (research §3.4): Windows Firewall on in all three profiles with
// inbound blocked by default and its service MpsSvc running, from Get-NetFirewallProfile's
// effective (Group Policy merged) ActiveStore; the registry (policy key over local key) when the
// cmdlet fails. A third-party firewall registered and on in Security Center passes on its own:
// such products turn Windows Firewall off on purpose.
import * as z from 'zod/mini';
import type { Evidence } from '../types';
import { fail, pass, unknown } from '../verdict';
import {
  defineProbeCheck,
  probeSection,
  probeServices,
  registryKey,
  sectionUnknown,
  serviceState,
  startType,
  type Probe,
  type Section,
  type ServiceFacts,
} from './probe';
import { regNumber, type RegistryValues } from './registry';
import { decodeProducts, productEvidence, securityCenterProducts, type SecurityCenterProduct } from './securityCenter';

const FirewallProfile = z.object({ Name: z.string(), Enabled: z.string(), DefaultInboundAction: z.string() });
type FirewallProfile = z.infer<typeof FirewallProfile>;

const PROFILE_NAMES = ['Domain', 'Private', 'Public'] as const;
type ProfileName = (typeof PROFILE_NAMES)[number];

export interface FirewallFacts {
  profiles: Section<FirewallProfile[]>;
  /**
   * Registry fallback: Group Policy key and local key per profile; for Private and Public also the
   * legacy (Windows XP-era) "Standard Profile" policy, which applies where the current one is silent.
   */
  registry: Record<
    ProfileName,
    { policy: Section<RegistryValues | null>; legacyPolicy?: Section<RegistryValues | null>; local: Section<RegistryValues | null> }
  >;
  services: Section<ServiceFacts[]>;
  thirdParty: Section<SecurityCenterProduct[]>;
}

interface ProfileState {
  enabled: boolean | null;
  /** Inbound connections without a matching rule are blocked. */
  blocksInbound: boolean | null;
}

/**
 * GpoBoolean and Action enum names as [string] renders them. NotConfigured means no store sets the
 * value: for DefaultInboundAction that is Windows' default, Block; for Enabled the registry decides.
 */
const ENABLED: Record<string, boolean> = { True: true, False: false };
const INBOUND: Record<string, boolean> = { Block: true, NotConfigured: true, Allow: false };

function profilesFromCmdlet(profiles: FirewallProfile[]): Record<ProfileName, ProfileState> | null {
  const out: Partial<Record<ProfileName, ProfileState>> = {};
  for (const name of PROFILE_NAMES) {
    const profile = profiles.find((p) => p.Name === name);
    if (!profile) return null;
    out[name] = { enabled: ENABLED[profile.Enabled] ?? null, blocksInbound: INBOUND[profile.DefaultInboundAction] ?? null };
  }
  return out as Record<ProfileName, ProfileState>;
}

/**
 * The registry's effective state: a policy value wins over the local one (the current policy over
 * the legacy Standard Profile one). EnableFirewall 1/0;
 * DefaultInboundAction 1 = block, 0 = allow, absent = block (the Windows default).
 */
function profilesFromRegistry(registry: FirewallFacts['registry']): Record<ProfileName, ProfileState> | null {
  const out: Partial<Record<ProfileName, ProfileState>> = {};
  for (const name of PROFILE_NAMES) {
    const { policy, legacyPolicy = { ok: true, value: null }, local } = registry[name];
    if (!policy.ok || !legacyPolicy.ok || !local.ok) return null;
    const value = (key: string) => regNumber(policy.value, key) ?? regNumber(legacyPolicy.value, key) ?? regNumber(local.value, key);
    const enable = value('EnableFirewall');
    const inbound = value('DefaultInboundAction');
    out[name] = {
      enabled: enable === 1 ? true : enable === 0 ? false : null,
      blocksInbound: inbound === null || inbound === 1 ? true : inbound === 0 ? false : null,
    };
  }
  return out as Record<ProfileName, ProfileState>;
}

export function evaluateFirewall(facts: FirewallFacts) {
  const evidence: Evidence = {};

  // A registered third-party firewall that is on: Windows Firewall may be off on purpose.
  let thirdPartyUnknown = false;
  if (facts.thirdParty.ok) {
    const { decoded, undecodable } = decodeProducts(facts.thirdParty.value);
    const active = decoded.find((p) => !p.microsoft && p.state === 'on');
    if (decoded.length > 0) evidence.security_center = decoded.map((p) => productEvidence(p, false));
    if (active) return pass({ ...evidence, source: 'security_center', third_party: active.name, rule: 'third_party_firewall' });
    thirdPartyUnknown = undecodable > 0;
  } else {
    evidence.security_center = facts.thirdParty.reason === 'not_available' ? 'not_available' : 'unreadable';
  }

  const fromCmdlet = facts.profiles.ok ? profilesFromCmdlet(facts.profiles.value) : null;
  const fromRegistry = profilesFromRegistry(facts.registry);
  if (!fromCmdlet && !fromRegistry) return facts.profiles.ok ? unknown('parse_error', evidence) : sectionUnknown(facts.profiles, evidence);
  evidence.source = fromCmdlet ? 'Get-NetFirewallProfile' : 'registry';
  // Per value: the cmdlet's effective state, the registry's where the cmdlet gives none.
  const profiles = Object.fromEntries(
    PROFILE_NAMES.map((name) => {
      const cmdlet = fromCmdlet?.[name];
      const registry = fromRegistry?.[name];
      return [
        name,
        { enabled: cmdlet?.enabled ?? registry?.enabled ?? null, blocksInbound: cmdlet?.blocksInbound ?? registry?.blocksInbound ?? null },
      ];
    }),
  ) as Record<ProfileName, ProfileState>;
  evidence.profiles = Object.fromEntries(PROFILE_NAMES.map((n) => [n.toLowerCase(), profiles[n].enabled]));
  evidence.default_inbound = Object.fromEntries(
    PROFILE_NAMES.map((n) => [n.toLowerCase(), profiles[n].blocksInbound === null ? null : profiles[n].blocksInbound ? 'block' : 'allow']),
  );

  const mpsSvc = facts.services.ok ? facts.services.value.find((s) => s.Name === 'MpsSvc') : undefined;
  const serviceRunning = !facts.services.ok ? null : mpsSvc === undefined ? false : serviceState(mpsSvc) === 'running';
  evidence.mpssvc = !facts.services.ok ? 'unreadable' : mpsSvc === undefined ? 'not_installed' : serviceState(mpsSvc);
  if (mpsSvc) evidence.mpssvc_start = startType(mpsSvc);

  const states = PROFILE_NAMES.map((n) => profiles[n]);
  // Positive evidence of an open machine FAILs, unless a third-party product we could not decode may be the firewall.
  const failRule = states.some((s) => s.enabled === false)
    ? 'profile_disabled'
    : serviceRunning === false
      ? 'service_not_running'
      : states.some((s) => s.enabled === true && s.blocksInbound === false)
        ? 'default_inbound_allow'
        : null;
  if (failRule) return thirdPartyUnknown ? unknown('third_party_state_unknown', evidence) : fail({ ...evidence, rule: failRule });
  if (states.some((s) => s.enabled === null || s.blocksInbound === null) || serviceRunning === null)
    return unknown('unexpected_value', evidence);
  return pass({ ...evidence, rule: 'all_profiles_enabled' });
}

function registryProfiles(probe: Probe): FirewallFacts['registry'] {
  return {
    Domain: { policy: registryKey(probe, 'firewallPolicyDomain'), local: registryKey(probe, 'firewallLocalDomain') },
    Private: {
      policy: registryKey(probe, 'firewallPolicyPrivate'),
      legacyPolicy: registryKey(probe, 'firewallPolicyStandard'),
      local: registryKey(probe, 'firewallLocalPrivate'),
    },
    Public: {
      policy: registryKey(probe, 'firewallPolicyPublic'),
      legacyPolicy: registryKey(probe, 'firewallPolicyStandard'),
      local: registryKey(probe, 'firewallLocalPublic'),
    },
  };
}

export const firewallCheck = defineProbeCheck(
  'FIREWALL_ENABLED',
  (probe): FirewallFacts => ({
    profiles: probeSection(probe, 'firewallProfiles', z.array(FirewallProfile)),
    registry: registryProfiles(probe),
    services: probeServices(probe),
    thirdParty: securityCenterProducts(probe, 'firewall'),
  }),
  (facts) => evaluateFirewall(facts),
);
