// Which Windows this is, from HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion (research §5.4):
// the build decides the release and "Windows 11" (build >= 22000, whatever ProductName says); the
// EditionID decides the servicing group. Shared by OS_VERSION and the host identity's os_version.
import { regNumber, regString, type RegistryValues } from './registry';

export const CURRENT_VERSION_KEY = 'SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion';
export const CURRENT_VERSION_VALUES = [
  'CurrentBuild',
  'CurrentBuildNumber',
  'UBR',
  'DisplayVersion',
  'ReleaseId',
  'EditionID',
  'ProductName',
  'InstallationType',
] as const;

export type WindowsFamily = 'client' | 'server';

export interface WindowsRelease {
  /** As a person would write it: "Windows 11 Pro", "Windows Server 2022 Datacenter". */
  name: string;
  build: number;
  /** Update Build Revision: the monthly patch level. */
  ubr: number | null;
  displayVersion: string | null;
  edition: string | null;
  installationType: string | null;
  family: WindowsFamily | null;
  /** Long-Term Servicing Channel (Enterprise LTSC, IoT Enterprise LTSC): no feature updates, one long support date. */
  ltsc: boolean;
  /** An evaluation edition (EditionID ending in "Eval"): serviced like the edition it evaluates. */
  evaluation: boolean;
  /** Key of the lifecycle table (checks/windows/lifecycle.ts); null for an edition we do not know. */
  lifecycleProduct: string | null;
  /** Feature update ("24H2") or LTSC/Server year ("2021"); null when neither the build nor DisplayVersion says. */
  cycle: string | null;
}

const WINDOWS_11_FIRST_BUILD = 22000;

const CLIENT_CYCLES: Record<number, string> = {
  17763: '1809',
  18362: '1903',
  18363: '1909',
  19041: '2004',
  19042: '20H2',
  19043: '21H1',
  19044: '21H2',
  19045: '22H2',
  22000: '21H2',
  22621: '22H2',
  22631: '23H2',
  26100: '24H2',
  26200: '25H2',
};
const LTSC_CYCLES: Record<number, string> = { 10240: '2015', 14393: '2016', 17763: '2019', 19044: '2021', 26100: '2024' };
const SERVER_CYCLES: Record<number, string> = { 14393: '2016', 17763: '2019', 20348: '2022', 25398: '23H2', 26100: '2025' };

type EditionGroup = 'home' | 'pro' | 'enterprise-education' | 'ltsc' | 'iot-ltsc';

/** EditionID values (not translated) by servicing group. */
const EDITION_GROUPS: Record<string, EditionGroup> = {
  Core: 'home',
  CoreN: 'home',
  CoreSingleLanguage: 'home',
  CoreCountrySpecific: 'home',
  Professional: 'pro',
  ProfessionalN: 'pro',
  ProfessionalEducation: 'pro',
  ProfessionalEducationN: 'pro',
  ProfessionalWorkstation: 'pro',
  ProfessionalWorkstationN: 'pro',
  CloudEdition: 'pro',
  CloudEditionN: 'pro',
  Enterprise: 'enterprise-education',
  EnterpriseN: 'enterprise-education',
  EnterpriseG: 'enterprise-education',
  EnterpriseGN: 'enterprise-education',
  Education: 'enterprise-education',
  EducationN: 'enterprise-education',
  IoTEnterprise: 'enterprise-education',
  IoTEnterpriseK: 'enterprise-education',
  ServerRdsh: 'enterprise-education',
  EnterpriseS: 'ltsc',
  EnterpriseSN: 'ltsc',
  IoTEnterpriseS: 'iot-ltsc',
  IoTEnterpriseSK: 'iot-ltsc',
};

const FAMILIES: Record<string, WindowsFamily> = { Client: 'client', Server: 'server', 'Server Core': 'server', 'Nano Server': 'server' };

const text = (values: RegistryValues, name: string): string | null => {
  const value = regString(values, name);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
};

/** Parses the CurrentVersion values; null when there is no numeric build. */
export function windowsRelease(values: RegistryValues): WindowsRelease | null {
  const buildText = text(values, 'CurrentBuild') ?? text(values, 'CurrentBuildNumber');
  if (buildText === null || !/^\d{4,6}$/.test(buildText)) return null;
  const build = Number(buildText);
  const ubrValue = regNumber(values, 'UBR');
  const ubr = typeof ubrValue === 'number' ? ubrValue : null;
  const displayVersion = text(values, 'DisplayVersion') ?? text(values, 'ReleaseId');
  const edition = text(values, 'EditionID');
  // Evaluation media install as EnterpriseEval, EnterpriseSEval, ServerStandardEval, …: the edition they evaluate.
  const evaluation = edition !== null && /Eval$/.test(edition);
  const servicedEdition = evaluation ? edition.slice(0, -'Eval'.length) : edition;
  const installationType = text(values, 'InstallationType');
  const family = windowsFamily({ ok: true, value: values });
  const windows11 = family === 'client' && build >= WINDOWS_11_FIRST_BUILD;

  let productName = text(values, 'ProductName');
  // ProductName still says "Windows 10 …" on Windows 11 (gopsutil #1143, RegRipper #67, mql #5238).
  if (productName !== null && windows11) productName = productName.replace(/^Windows 10(?= |$)/, 'Windows 11');
  const name = productName ?? (family === 'server' ? 'Windows Server' : windows11 ? 'Windows 11' : 'Windows');

  let lifecycleProduct: string | null = null;
  let cycle: string | null = null;
  let ltsc = false;
  if (family === 'server') {
    lifecycleProduct = 'windows-server';
    cycle = SERVER_CYCLES[build] ?? null;
  } else if (family === 'client') {
    const group = servicedEdition === null ? undefined : EDITION_GROUPS[servicedEdition];
    const major = windows11 ? 'windows-11' : 'windows-10';
    if (group === 'ltsc' || group === 'iot-ltsc') {
      ltsc = true;
      lifecycleProduct = `${major}-${group}`;
      cycle = LTSC_CYCLES[build] ?? null;
    } else if (group !== undefined) {
      lifecycleProduct = windows11 && (group === 'home' || group === 'pro') ? 'windows-11-home-pro' : `${major}-${group}`;
      cycle = CLIENT_CYCLES[build] ?? displayVersion;
    }
  }
  return { name, build, ubr, displayVersion, edition, installationType, family, ltsc, evaluation, lifecycleProduct, cycle };
}

/** Client or server from the CurrentVersion key's InstallationType; null when it cannot be read. */
export function windowsFamily(currentVersion: { ok: true; value: RegistryValues | null } | { ok: false }): WindowsFamily | null {
  if (!currentVersion.ok || currentVersion.value === null) return null;
  const installationType = text(currentVersion.value, 'InstallationType');
  return installationType === null ? null : (FAMILIES[installationType] ?? null);
}

/** "Windows 11 Pro 24H2 (26100.2314)". */
export function windowsVersionString(release: WindowsRelease): string {
  const revision = release.ubr === null ? `${release.build}` : `${release.build}.${release.ubr}`;
  return `${release.name}${release.displayVersion ? ` ${release.displayVersion}` : ''} (${revision})`;
}
