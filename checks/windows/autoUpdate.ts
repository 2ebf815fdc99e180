// AUTO_UPDATE on Windows (research §6.4): Windows Update Group Policy (NoAutoUpdate, AUOptions),
// else the AUOptions that sconfig and the Server "Configure Automatic Updates" dialog write outside
// the policy key, the MDM Update CSP (AllowAutoUpdate) and the start types of wuauserv and UsoSvc. Without any
// policy Windows 10/11 download and install automatically. wuauserv is a demand/trigger-start
// service that is stopped most of the time: only *disabled* services count against the machine.
// Settings are the intent; the effect is what the machine installed: when they say updates install
// by themselves, the installed cumulative update (build.UBR) must not be older than a monthly
// security update released more than policy.autoUpdate.maxPendingDays ago (updateHistory.ts).
// Download-only accepted by policy: the download leaves no record the probe reads, so the installed
// update is the effect judged, as on macOS: current → PASS (nothing installs without being
// downloaded); a security update left uninstalled longer than maxPendingDays → FAIL, by hand or not.
import type { Policy } from '../policy';
import type { Evidence, PassOrFail } from '../types';
import { fail, pass, unknown } from '../verdict';
import { windowsRelease } from './osRelease';
import {
  defineProbeCheck,
  probeServices,
  registryKey,
  sectionUnknown,
  serviceState,
  startType,
  type Section,
  type ServiceFacts,
} from './probe';
import { regNumber, regString, type RegistryValues } from './registry';
import { nextSecurityUpdate, updateLineFor, UPDATE_HISTORY_RECORDED_THROUGH } from './updateHistory';

const DAY_MS = 86_400_000;

export interface AutoUpdateFacts {
  auPolicy: Section<RegistryValues | null>;
  /** HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\WindowsUpdate\Auto Update (no Group Policy). */
  auLocal: Section<RegistryValues | null>;
  updateCsp: Section<RegistryValues | null>;
  pause: Section<RegistryValues | null>;
  services: Section<ServiceFacts[]>;
  /** HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion: the installed build and patch level (UBR). */
  currentVersion: Section<RegistryValues | null>;
}

/** PauseUpdatesExpiryTime as Windows writes it: an ISO 8601 UTC timestamp. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

export function evaluateAutoUpdate(facts: AutoUpdateFacts, policy: Policy, now: Date) {
  const intent = evaluateSettings(facts, policy, now);
  if (intent.status !== 'PASS') return intent;
  const installed = judgeInstalled(intent, facts, policy, now);
  if (intent.evidence.rule !== 'download_only_accepted' || installed.status !== 'FAIL') return installed;
  return fail({ ...installed.evidence, rule: 'downloaded_not_installed' });
}

function evaluateSettings(facts: AutoUpdateFacts, policy: Policy, now: Date) {
  const evidence: Evidence = { source: 'registry' };
  const { auPolicy, updateCsp, services } = facts;
  if (!auPolicy.ok) return sectionUnknown(auPolicy, evidence);
  if (!updateCsp.ok) return sectionUnknown(updateCsp, evidence);
  if (!services.ok) return sectionUnknown(services, evidence);

  const noAutoUpdate = regNumber(auPolicy.value, 'NoAutoUpdate');
  const managedAuOptions = regNumber(auPolicy.value, 'AUOptions');
  // Group Policy wins; without it, the local AUOptions a Server's sconfig sets (4 = install automatically).
  if (managedAuOptions === null && !facts.auLocal.ok) return sectionUnknown(facts.auLocal, evidence);
  const localAuOptions = managedAuOptions === null && facts.auLocal.ok ? regNumber(facts.auLocal.value, 'AUOptions') : null;
  const auOptions = managedAuOptions ?? localAuOptions;
  if (localAuOptions !== null) evidence.au_options_source = 'local';
  const useWsus = regNumber(auPolicy.value, 'UseWUServer');
  const allowAutoUpdate = regNumber(updateCsp.value, 'AllowAutoUpdate');
  if (noAutoUpdate === 'invalid' || auOptions === 'invalid' || allowAutoUpdate === 'invalid') return unknown('unexpected_value', evidence);
  Object.assign(evidence, {
    no_auto_update: noAutoUpdate,
    au_options: auOptions,
    allow_auto_update_csp: allowAutoUpdate,
    wsus: useWsus === 1,
  });

  const service = (name: string) => services.value.find((s) => s.Name === name);
  const wuauserv = service('wuauserv');
  const usoSvc = service('UsoSvc');
  evidence.wuauserv_start = wuauserv ? startType(wuauserv) : 'not_installed';
  if (wuauserv) evidence.wuauserv_status = serviceState(wuauserv);
  evidence.usosvc_start = usoSvc ? startType(usoSvc) : 'not_installed';

  if (facts.pause.ok) {
    const until = regString(facts.pause.value, 'PauseUpdatesExpiryTime');
    if (typeof until === 'string' && ISO_TIME.test(until) && Date.parse(until) > now.getTime()) evidence.paused_until = until.slice(0, 10);
  }

  // Any source that positively turns automatic updates off decides.
  if (noAutoUpdate === 1) return fail({ ...evidence, rule: 'no_auto_update' });
  if (allowAutoUpdate === 5) return fail({ ...evidence, rule: 'csp_auto_update_off' });
  if (!wuauserv) return fail({ ...evidence, rule: 'wuauserv_not_installed' });
  if (startType(wuauserv) === 'disabled') return fail({ ...evidence, rule: 'wuauserv_disabled' });
  if (usoSvc && startType(usoSvc) === 'disabled') return fail({ ...evidence, rule: 'usosvc_disabled' });
  if (noAutoUpdate !== null && noAutoUpdate !== 0) return unknown('unexpected_value', { ...evidence, value: 'NoAutoUpdate' });

  // AUOptions (Group Policy): 2 notify before download, 3 download and notify, 4 scheduled install,
  // 5 local administrator chooses, 7 notify for install and restart (Server).
  switch (auOptions) {
    case 1:
      // Only the local key uses 1 (Windows Update Agent: automatic updates disabled; sconfig "Manual").
      if (localAuOptions === 1) return fail({ ...evidence, rule: 'no_auto_update' });
      return unknown('unexpected_value', { ...evidence, value: 'AUOptions' });
    case 2:
      return fail({ ...evidence, rule: 'notify_before_download' });
    case 3:
      return policy.autoUpdate.acceptDownloadOnly
        ? pass({ ...evidence, rule: 'download_only_accepted' })
        : fail({ ...evidence, rule: 'download_only' });
    case 4:
    case 7:
      return pass({ ...evidence, rule: 'automatic_install' });
    case 5:
      return unknown('local_admin_chooses', evidence);
    case null:
      break;
    default:
      return unknown('unexpected_value', { ...evidence, value: 'AUOptions' });
  }

  // Update CSP (Intune): 0 notify before download, 1-4 automatic install, 5 off (handled above).
  if (allowAutoUpdate === 0) return fail({ ...evidence, rule: 'notify_before_download' });
  if (allowAutoUpdate !== null && allowAutoUpdate >= 1 && allowAutoUpdate <= 4) return pass({ ...evidence, rule: 'automatic_install' });
  if (allowAutoUpdate !== null) return unknown('unexpected_value', { ...evidence, value: 'AllowAutoUpdate' });

  // No policy at all and services not disabled: the Windows 10/11 default installs automatically.
  return pass({ ...evidence, source: 'default', rule: 'default' });
}

/**
 * The settings say updates install by themselves: the installed cumulative update shows whether they
 * did. FAIL `update_not_installed` when a monthly security update newer than the installed UBR was
 * released more than maxPendingDays ago; UNKNOWN when the table cannot tell (a line it lacks, no UBR,
 * or no newer row while the table itself ends more than maxPendingDays ago).
 */
function judgeInstalled<Word extends string>(intent: PassOrFail<Word>, facts: AutoUpdateFacts, policy: Policy, now: Date) {
  const maxPendingDays = policy.autoUpdate.maxPendingDays;
  const { rule, ...settings } = intent.evidence;
  const evidence: Evidence = { ...settings, max_pending_days: maxPendingDays };
  if (!facts.currentVersion.ok) return sectionUnknown(facts.currentVersion, evidence);
  const release = facts.currentVersion.value === null ? null : windowsRelease(facts.currentVersion.value);
  if (release === null) return unknown('unrecognized_version', evidence);
  const line = updateLineFor(release);
  if (line === null) return unknown('update_line_not_in_table', { ...evidence, build: release.build });
  if (release.ubr === null) return unknown('ubr_missing', { ...evidence, build: release.build });
  Object.assign(evidence, { installed_update: `${release.build}.${release.ubr}`, update_line: line.name });
  const pendingTooLong = (released: string) => Date.parse(`${released}T00:00:00Z`) + maxPendingDays * DAY_MS <= now.getTime();
  const next = nextSecurityUpdate(line, release.ubr);
  if (next) {
    Object.assign(evidence, { newer_update: `${release.build}.${next.ubr}`, newer_update_released: next.released });
    if (pendingTooLong(next.released)) return fail({ ...evidence, rule: 'update_not_installed' });
  } else if (pendingTooLong(UPDATE_HISTORY_RECORDED_THROUGH)) {
    // Updates released since the table ends could be pending longer than allowed: not decided.
    return unknown('patch_table_outdated', { ...evidence, table_recorded_through: UPDATE_HISTORY_RECORDED_THROUGH });
  }
  return pass({ ...evidence, rule });
}

export const autoUpdateCheck = defineProbeCheck(
  'AUTO_UPDATE',
  (probe): AutoUpdateFacts => ({
    auPolicy: registryKey(probe, 'auPolicy'),
    auLocal: registryKey(probe, 'auLocal'),
    updateCsp: registryKey(probe, 'updateCsp'),
    pause: registryKey(probe, 'updatePause'),
    services: probeServices(probe),
    currentVersion: registryKey(probe, 'os'),
  }),
  evaluateAutoUpdate,
);
