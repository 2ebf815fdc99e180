// The one PowerShell process a Windows posture cycle starts (plus the secedit.exe and w32tm.exe it runs): it
// gathers every registry value, service state and CIM/WMI fact the nine checks need and prints
// them as one JSON document, which the checks share through ctx.shared(). Each section fails on its
// own (`{ok:false,error}`), so a denied BitLocker query never hides the firewall state.
import * as z from 'zod/mini';
import type { CheckKey } from '../../src/protocol/schemas';
import { defineCheck, type Check, type CheckContext, type Evidence } from '../types';
import { unknown, type CommandFailureReason } from '../verdict';
import { CURRENT_VERSION_KEY, CURRENT_VERSION_VALUES } from './osRelease';
import { PRELUDE, psStrings, runPowerShellJson } from './powershell';
import { RegistryValues } from './registry';

/** Loading the NetSecurity/Defender modules and the CIM calls take a few seconds on a slow laptop. */
export const PROBE_TIMEOUT_MS = 25_000;

/** Screen-lock values per user hive (REG_SZ strings), in the policy key and in the user's own key. */
const DESKTOP_VALUES = psStrings(['ScreenSaveActive', 'ScreenSaverIsSecure', 'ScreenSaveTimeOut', 'SCRNSAVE.EXE']);

/** Power settings (powercfg aliases CONSOLELOCK and STANDBYIDLE) and their Group Policy keys. */
const CONSOLE_LOCK_GUID = '0e796bdb-100d-47d6-a2d5-f7d2daa51f51';
const STANDBY_IDLE_GUID = '29f6c1db-86da-48c5-9fdb-f2b67b1f44da';

/** Services whose start type (registry) and state (Win32_Service) the checks read. */
/**
 * Time-Service events in the System log (IDs are not translated): 35 and 37 a time source in use,
 * 36 no sync for a while, 47/129/134 a peer that does not answer or cannot be found.
 */
const TIME_SERVICE_EVENT_IDS = [35, 37, 36, 47, 129, 134] as const;

export const PROBE_SERVICES = ['MpsSvc', 'W32Time', 'wuauserv', 'UsoSvc', 'TermService', 'sshd', 'WinRM'] as const;

/** Registry reads, by name: the key under HKLM, then the values wanted. A key that does not exist reads as null. */
export const REGISTRY_READS = {
  os: [CURRENT_VERSION_KEY, ...CURRENT_VERSION_VALUES],
  systemPolicy: ['SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System', 'InactivityTimeoutSecs'],
  winlogon: ['SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon', 'ScreenSaverGracePeriod'],
  consoleLockPolicy: [`SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings\\${CONSOLE_LOCK_GUID}`, 'ACSettingIndex', 'DCSettingIndex'],
  standbyIdlePolicy: [`SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings\\${STANDBY_IDLE_GUID}`, 'ACSettingIndex', 'DCSettingIndex'],
  firewallPolicyDomain: ['SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\DomainProfile', 'EnableFirewall', 'DefaultInboundAction'],
  firewallPolicyPrivate: ['SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\PrivateProfile', 'EnableFirewall', 'DefaultInboundAction'],
  firewallPolicyPublic: ['SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\PublicProfile', 'EnableFirewall', 'DefaultInboundAction'],
  // The Windows XP-era "Standard Profile" Group Policy: still applied to the private and public profiles.
  firewallPolicyStandard: ['SOFTWARE\\Policies\\Microsoft\\WindowsFirewall\\StandardProfile', 'EnableFirewall', 'DefaultInboundAction'],
  firewallLocalDomain: [
    'SYSTEM\\CurrentControlSet\\Services\\SharedAccess\\Parameters\\FirewallPolicy\\DomainProfile',
    'EnableFirewall',
    'DefaultInboundAction',
  ],
  firewallLocalPrivate: [
    'SYSTEM\\CurrentControlSet\\Services\\SharedAccess\\Parameters\\FirewallPolicy\\StandardProfile',
    'EnableFirewall',
    'DefaultInboundAction',
  ],
  firewallLocalPublic: [
    'SYSTEM\\CurrentControlSet\\Services\\SharedAccess\\Parameters\\FirewallPolicy\\PublicProfile',
    'EnableFirewall',
    'DefaultInboundAction',
  ],
  w32time: ['SYSTEM\\CurrentControlSet\\Services\\W32Time\\Parameters', 'Type', 'NtpServer'],
  w32timePolicy: ['SOFTWARE\\Policies\\Microsoft\\W32Time\\Parameters', 'Type', 'NtpServer'],
  ntpClient: ['SYSTEM\\CurrentControlSet\\Services\\W32Time\\TimeProviders\\NtpClient', 'Enabled'],
  ntpClientPolicy: ['SOFTWARE\\Policies\\Microsoft\\W32Time\\TimeProviders\\NtpClient', 'Enabled'],
  vmicTimeProvider: ['SYSTEM\\CurrentControlSet\\Services\\W32Time\\TimeProviders\\VMICTimeProvider', 'Enabled'],
  auPolicy: ['SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate\\AU', 'NoAutoUpdate', 'AUOptions', 'UseWUServer'],
  // Where sconfig and the Server "Configure Automatic Updates" dialog write AUOptions (no Group Policy).
  auLocal: ['SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\WindowsUpdate\\Auto Update', 'AUOptions'],
  updateCsp: ['SOFTWARE\\Microsoft\\PolicyManager\\current\\device\\Update', 'AllowAutoUpdate'],
  updatePause: ['SOFTWARE\\Microsoft\\WindowsUpdate\\UX\\Settings', 'PauseUpdatesExpiryTime'],
  rdpPolicy: ['SOFTWARE\\Policies\\Microsoft\\Windows NT\\Terminal Services', 'fDenyTSConnections', 'UserAuthentication'],
  rdp: ['SYSTEM\\CurrentControlSet\\Control\\Terminal Server', 'fDenyTSConnections'],
  rdpTcp: ['SYSTEM\\CurrentControlSet\\Control\\Terminal Server\\WinStations\\RDP-Tcp', 'PortNumber', 'UserAuthentication'],
  deviceLock: ['SOFTWARE\\Microsoft\\PolicyManager\\current\\device\\DeviceLock', 'DevicePasswordEnabled', 'MinDevicePasswordLength'],
} as const satisfies Record<string, readonly [string, ...string[]]>;
export type RegistryRead = keyof typeof REGISTRY_READS;

export const PROBE_SCRIPT = `${PRELUDE}
$registryReads = [ordered]@{
${Object.entries(REGISTRY_READS)
  .map(([name, read]) => `  ${name} = ${psStrings(read)}`)
  .join('\n')}
}
$registry = [ordered]@{}
foreach ($read in $registryReads.GetEnumerator()) {
  $path = $read.Value[0]
  $names = $read.Value[1..($read.Value.Length - 1)]
  $registry[$read.Key] = Invoke-Section { Read-Key $HKLM $path $names }
}

$services = Invoke-ListSection {
  $names = ${psStrings(PROBE_SERVICES)}
  $filter = ($names | ForEach-Object { 'Name=''{0}''' -f $_ }) -join ' OR '
  $states = @{}
  foreach ($s in @(Get-CimInstance -ClassName Win32_Service -Filter $filter)) { $states[$s.Name] = $s.State }
  foreach ($name in $names) {
    $config = Read-Key $HKLM ('SYSTEM\\CurrentControlSet\\Services\\' + $name) @('Start')
    if ($null -eq $config) { continue }
    $triggers = $HKLM.OpenSubKey('SYSTEM\\CurrentControlSet\\Services\\' + $name + '\\TriggerInfo')
    if ($null -ne $triggers) { $triggers.Close() }
    [ordered]@{ Name = $name; Start = $config['Start']; Triggered = ($null -ne $triggers); State = $states[$name] }
  }
}

$userHives = Invoke-ListSection {
  $users = [Microsoft.Win32.RegistryKey]::OpenBaseKey('Users', 'Registry64')
  foreach ($sid in $users.GetSubKeyNames()) {
    if ($sid.EndsWith('_Classes')) { continue }
    # Without administrator rights only one's own hive opens: a denied hive is reported, not fatal.
    try {
      [ordered]@{
        Sid = $sid
        Policy = (Read-Key $users ($sid + '\\Software\\Policies\\Microsoft\\Windows\\Control Panel\\Desktop') ${DESKTOP_VALUES})
        User = (Read-Key $users ($sid + '\\Control Panel\\Desktop') ${DESKTOP_VALUES})
      }
    } catch { [ordered]@{ Sid = $sid; Error = (Get-ErrorKind $_) } }
  }
}

$power = Invoke-Section {
  $plan = @(Get-CimInstance -Namespace root/cimv2/power -ClassName Win32_PowerPlan -Filter 'IsActive = TRUE')[0]
  if ($null -eq $plan) { return $null }
  $planGuid = $plan.InstanceID.Substring($plan.InstanceID.LastIndexOf('\\') + 1)
  $values = [ordered]@{}
  foreach ($setting in @(@('ConsoleLock', '{${CONSOLE_LOCK_GUID}}'), @('StandbyIdle', '{${STANDBY_IDLE_GUID}}'))) {
    foreach ($source in @('AC', 'DC')) {
      $id = 'Microsoft:PowerSettingDataIndex\\{0}\\{1}\\{2}' -f $planGuid, $source, $setting[1]
      $index = @(Get-CimInstance -Namespace root/cimv2/power -ClassName Win32_PowerSettingDataIndex -Filter ('InstanceID = ''{0}''' -f $id.Replace('\\', '\\\\')))[0]
      $values[$source + $setting[0]] = if ($null -eq $index) { $null } else { [int64]$index.SettingIndexValue }
    }
  }
  $values
}

$computer = Invoke-Section {
  $system = @(Get-CimInstance -ClassName Win32_ComputerSystem)[0]
  $joinInfo = $HKLM.OpenSubKey('SYSTEM\\CurrentControlSet\\Control\\CloudDomainJoin\\JoinInfo')
  $entraJoined = $false
  if ($null -ne $joinInfo) { $entraJoined = $joinInfo.SubKeyCount -gt 0; $joinInfo.Close() }
  [ordered]@{ PartOfDomain = [bool]$system.PartOfDomain; EntraJoined = $entraJoined }
}

$firewallProfiles = Invoke-ListSection {
  foreach ($p in @(Get-NetFirewallProfile -PolicyStore ActiveStore)) {
    [ordered]@{ Name = [string]$p.Name; Enabled = [string]$p.Enabled; DefaultInboundAction = [string]$p.DefaultInboundAction }
  }
}

function Get-SecurityCenterProducts([string]$ClassName) {
  foreach ($p in @(Get-CimInstance -Namespace root/SecurityCenter2 -ClassName $ClassName)) {
    [ordered]@{ displayName = [string]$p.displayName; productState = [int64]$p.productState }
  }
}
$antivirusProducts = Invoke-ListSection { Get-SecurityCenterProducts 'AntiVirusProduct' }
$firewallProducts = Invoke-ListSection { Get-SecurityCenterProducts 'FirewallProduct' }

$defender = Invoke-Section {
  $s = Get-MpComputerStatus
  [ordered]@{
    AMRunningMode = $s.AMRunningMode
    AMServiceEnabled = $s.AMServiceEnabled
    AntivirusEnabled = $s.AntivirusEnabled
    RealTimeProtectionEnabled = $s.RealTimeProtectionEnabled
    AntivirusSignatureAge = $s.AntivirusSignatureAge
    DefenderSignaturesOutOfDate = $s.DefenderSignaturesOutOfDate
    IsTamperProtected = $s.IsTamperProtected
  }
}

# Methods, not the cached ProtectionStatus property, which osquery found stale on build 26100.
$bitlocker = Invoke-ListSection {
  # Win32_Volume.Name is the drive letter or mount folder, or the volume GUID path of a volume mounted nowhere.
  $mountPaths = @{}
  try { foreach ($w in @(Get-CimInstance -ClassName Win32_Volume)) { $mountPaths[[string]$w.DeviceID] = [string]$w.Name } } catch { }
  foreach ($v in @(Get-CimInstance -Namespace root/CIMV2/Security/MicrosoftVolumeEncryption -ClassName Win32_EncryptableVolume)) {
    $protection = Invoke-CimMethod -InputObject $v -MethodName GetProtectionStatus
    $conversion = Invoke-CimMethod -InputObject $v -MethodName GetConversionStatus
    $method = Invoke-CimMethod -InputObject $v -MethodName GetEncryptionMethod
    $protectors = Invoke-CimMethod -InputObject $v -MethodName GetKeyProtectors
    $types = New-Object System.Collections.Generic.List[int]
    foreach ($id in @($protectors.VolumeKeyProtectorID)) {
      if ($null -eq $id) { continue }
      $types.Add([int](Invoke-CimMethod -InputObject $v -MethodName GetKeyProtectorType -Arguments @{ VolumeKeyProtectorID = $id }).KeyProtectorType)
    }
    $mountPath = $mountPaths[[string]$v.DeviceID]
    [ordered]@{
      DriveLetter = $v.DriveLetter
      Mounted = if ($null -eq $mountPath) { $null } else { -not $mountPath.StartsWith('\\\\?\\') }
      VolumeType = $v.VolumeType
      ProtectionStatus = $protection.ProtectionStatus
      ConversionStatus = $conversion.ConversionStatus
      EncryptionPercentage = $conversion.EncryptionPercentage
      EncryptionMethod = $method.EncryptionMethod
      KeyProtectorTypes = $types.ToArray()
      ReturnValues = @($protection.ReturnValue, $conversion.ReturnValue, $method.ReturnValue, $protectors.ReturnValue)
    }
  }
}

$listeningPorts = Invoke-ListSection {
  Get-NetTCPConnection | Where-Object { [string]$_.State -eq 'Listen' } | ForEach-Object { [ordered]@{ Address = [string]$_.LocalAddress; Port = [int]$_.LocalPort } }
}

# w32tm translates its labels and dates but not its numbers: the lines go to the check as printed.
$w32tm = Invoke-Section {
  $ErrorActionPreference = 'Continue'
  $lines = @(& (Join-Path ([Environment]::SystemDirectory) 'w32tm.exe') /query /status /verbose 2>&1 | ForEach-Object { [string]$_ })
  $exitCode = $LASTEXITCODE
  $ErrorActionPreference = 'Stop'
  [ordered]@{ ExitCode = $exitCode; Lines = $lines }
}

$timeEvents = Invoke-ListSection {
  $filter = @{ LogName = 'System'; ProviderName = 'Microsoft-Windows-Time-Service'; Id = ${TIME_SERVICE_EVENT_IDS.join(', ')} }
  try {
    foreach ($e in @(Get-WinEvent -FilterHashtable $filter -MaxEvents 20)) {
      [ordered]@{ Id = $e.Id; TimeCreated = $e.TimeCreated.ToUniversalTime().ToString('yyyy-MM-ddTHH:mm:ssZ') }
    }
  } catch { if ($_.FullyQualifiedErrorId -notlike 'NoMatchingEventsFound*') { throw } }
}

# secedit writes the security policy (local merged with domain policy) as a UTF-16 INF; only [System Access] is kept.
$secedit = Invoke-Section {
  $inf = [System.IO.Path]::GetTempFileName()
  try {
    # Windows PowerShell turns a native command's stderr into errors: let secedit's through.
    $ErrorActionPreference = 'Continue'
    $null = & (Join-Path ([Environment]::SystemDirectory) 'secedit.exe') /export /mergedpolicy /areas SECURITYPOLICY /cfg $inf /quiet 2>$null
    $exitCode = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    $lines = New-Object System.Collections.Generic.List[string]
    $inSection = $false
    foreach ($line in [System.IO.File]::ReadAllLines($inf)) {
      if ($line -match '^\\s*\\[') { $inSection = $line.Trim() -eq '[System Access]'; continue }
      if ($inSection) { $lines.Add($line) }
    }
    [ordered]@{ ExitCode = $exitCode; SystemAccess = $lines.ToArray() }
  } finally { Remove-Item -LiteralPath $inf -Force -ErrorAction SilentlyContinue }
}

# NetUserModalsGet through ADSI (the local SAM as a WinNT domain): the minimum length without administrator rights.
$accountPolicy = Invoke-Section {
  $sam = [ADSI]('WinNT://' + [Environment]::MachineName)
  [ordered]@{ MinPasswordLength = [int]$sam.psbase.InvokeGet('MinPasswordLength') }
}

$principal = [Security.Principal.WindowsPrincipal][Security.Principal.WindowsIdentity]::GetCurrent()
Write-Json ([ordered]@{
  schema = 1
  elevated = $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
  systemDrive = $env:SystemDrive
  registry = $registry
  services = $services
  userHives = $userHives
  power = $power
  computer = $computer
  firewallProfiles = $firewallProfiles
  antivirusProducts = $antivirusProducts
  firewallProducts = $firewallProducts
  defender = $defender
  bitlocker = $bitlocker
  listeningPorts = $listeningPorts
  w32tm = $w32tm
  timeEvents = $timeEvents
  secedit = $secedit
  accountPolicy = $accountPolicy
})
`;

// ---- Parsing the document --------------------------------------------------------------------

const SectionEnvelope = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.string().check(z.maxLength(200)) }),
]);

const ProbeDocument = z.object({
  schema: z.literal(1),
  elevated: z.boolean(),
  systemDrive: z.nullable(z.string()),
  registry: z.record(z.string(), SectionEnvelope),
  services: SectionEnvelope,
  userHives: SectionEnvelope,
  power: SectionEnvelope,
  computer: SectionEnvelope,
  firewallProfiles: SectionEnvelope,
  antivirusProducts: SectionEnvelope,
  firewallProducts: SectionEnvelope,
  defender: SectionEnvelope,
  bitlocker: SectionEnvelope,
  listeningPorts: SectionEnvelope,
  w32tm: SectionEnvelope,
  timeEvents: SectionEnvelope,
  secedit: SectionEnvelope,
  accountPolicy: SectionEnvelope,
});
type ProbeDocument = z.infer<typeof ProbeDocument>;
export type SectionName = Exclude<keyof ProbeDocument, 'schema' | 'elevated' | 'systemDrive' | 'registry'>;

/** Why a section could not be read: the command's failure, or a WMI class or namespace this Windows lacks. */
export type SectionReason = CommandFailureReason | 'not_available';

export type Probe = { ok: true; doc: ProbeDocument } | { ok: false; reason: SectionReason };

/** One section's facts, or why they are missing (`error` is the locale-free kind the script reported). */
export type Section<T> = { ok: true; value: T } | { ok: false; reason: SectionReason; error?: string };

/** UNKNOWN for a section that could not be read, with the script's error kind as evidence. */
export function sectionUnknown(section: { reason: SectionReason; error?: string }, evidence: Evidence) {
  return unknown(section.reason, section.error ? { ...evidence, probe_error: section.error } : evidence);
}

function parseProbe(json: unknown): Probe {
  const parsed = ProbeDocument.safeParse(json);
  return parsed.success ? { ok: true, doc: parsed.data } : { ok: false, reason: 'parse_error' };
}

/** Runs the probe once per cycle; every Windows check reads its sections. */
function windowsProbe(ctx: CheckContext): Promise<Probe> {
  return ctx.shared('windows:probe', async () => {
    const result = await runPowerShellJson(ctx.host, PROBE_SCRIPT, PROBE_TIMEOUT_MS);
    return result.ok ? parseProbe(result.json) : { ok: false, reason: result.reason };
  });
}

/** A Windows check: its facts are sections of the one probe per cycle (and, rarely, a read of its own). */
export function defineProbeCheck<Facts, Word extends string, Key extends CheckKey>(
  key: Key,
  read: (probe: Probe, ctx: CheckContext) => Facts | Promise<Facts>,
  evaluate: Check<Facts, Word>['evaluate'],
): Check<Facts, Word, Key> {
  return defineCheck({ key, platform: 'WINDOWS', collect: async (ctx) => read(await windowsProbe(ctx), ctx), evaluate });
}

/** The UNKNOWN/NOT_APPLICABLE reason for an error kind the script reported. */
function sectionErrorReason(error: string): SectionReason {
  switch (error) {
    case 'access_denied':
    case 'cim_AccessDenied':
      return 'permission_denied';
    case 'cim_InvalidNamespace':
    case 'cim_InvalidClass':
      return 'not_available';
    case 'command_not_found':
      return 'command_not_found';
    default:
      return 'check_error';
  }
}

function fromEnvelope<T>(envelope: z.infer<typeof SectionEnvelope> | undefined, schema: z.ZodMiniType<T>): Section<T> {
  if (envelope === undefined) return { ok: false, reason: 'parse_error' };
  if (!envelope.ok) return { ok: false, reason: sectionErrorReason(envelope.error), error: envelope.error };
  const parsed = schema.safeParse(envelope.value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: 'parse_error' };
}

export function probeSection<T>(probe: Probe, name: SectionName, schema: z.ZodMiniType<T>): Section<T> {
  return probe.ok ? fromEnvelope(probe.doc[name], schema) : { ok: false, reason: probe.reason };
}

/** The values present under one key; null when the key does not exist (for policy keys: not configured). */
export function registryKey(probe: Probe, name: RegistryRead): Section<RegistryValues | null> {
  return probe.ok ? fromEnvelope(probe.doc.registry[name], z.nullable(RegistryValues)) : { ok: false, reason: probe.reason };
}

/** Whether the probe ran with administrator rights (SYSTEM counts): some sources need them. */
export function probeElevated(probe: Probe): boolean | null {
  return probe.ok ? probe.doc.elevated : null;
}

export const ComputerFacts = z.object({
  /** Win32_ComputerSystem.PartOfDomain: joined to Active Directory. */
  PartOfDomain: z.boolean(),
  /** HKLM\SYSTEM\CurrentControlSet\Control\CloudDomainJoin\JoinInfo has an entry: joined to Entra ID. */
  EntraJoined: z.boolean(),
});
export type ComputerFacts = z.infer<typeof ComputerFacts>;

export function probeComputer(probe: Probe): Section<ComputerFacts> {
  return probeSection(probe, 'computer', ComputerFacts);
}

export const ServiceFacts = z.object({
  Name: z.string(),
  /** Registry Start: 2 automatic, 3 manual (demand or trigger start), 4 disabled. */
  Start: z.nullable(z.int()),
  /** A TriggerInfo key exists: the service starts on events (trigger start). */
  Triggered: z.boolean(),
  /** Win32_Service.State: Running, Stopped, Start Pending, … (WMI values, not translated). */
  State: z.nullable(z.string()),
});
export type ServiceFacts = z.infer<typeof ServiceFacts>;

/** Installed services among PROBE_SERVICES; one that is absent from the list is not installed. */
export function probeServices(probe: Probe): Section<ServiceFacts[]> {
  return probeSection(probe, 'services', z.array(ServiceFacts));
}

export type StartType = 'auto' | 'manual' | 'trigger' | 'disabled' | 'boot' | 'system' | 'unknown';

export function startType(service: ServiceFacts): StartType {
  switch (service.Start) {
    case 0:
      return 'boot';
    case 1:
      return 'system';
    case 2:
      return 'auto';
    case 3:
      return service.Triggered ? 'trigger' : 'manual';
    case 4:
      return 'disabled';
    default:
      return 'unknown';
  }
}

const SERVICE_STATES: Record<string, string> = {
  Running: 'running',
  Stopped: 'stopped',
  'Start Pending': 'start_pending',
  'Stop Pending': 'stop_pending',
  'Continue Pending': 'continue_pending',
  'Pause Pending': 'pause_pending',
  Paused: 'paused',
};

/** Win32_Service.State as an evidence token; anything unknown is 'unknown'. */
export function serviceState(service: ServiceFacts): string {
  return (service.State !== null && SERVICE_STATES[service.State]) || 'unknown';
}
