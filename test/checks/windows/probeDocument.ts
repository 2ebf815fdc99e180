// What checks/windows/probe.ts's PowerShell script prints, section by section, on a stock
// Windows 11 Pro 25H2 laptop in a workgroup (the baseline every Windows fixture starts from).
// Values are the documented defaults or samples named beside them; cases change what they test.

export type Envelope = { ok: true; value: unknown } | { ok: false; error: string };
export const ok = (value: unknown): Envelope => ({ ok: true, value });
export const err = (error: string): Envelope => ({ ok: false, error });

export interface ProbeDocument {
  schema: 1;
  elevated: boolean;
  systemDrive: string;
  registry: Record<string, Envelope>;
  services: Envelope;
  userHives: Envelope;
  power: Envelope;
  computer: Envelope;
  firewallProfiles: Envelope;
  antivirusProducts: Envelope;
  firewallProducts: Envelope;
  defender: Envelope;
  bitlocker: Envelope;
  listeningPorts: Envelope;
  w32tm: Envelope;
  timeEvents: Envelope;
  secedit: Envelope;
  accountPolicy: Envelope;
}

/** A local account's SID and an Entra ID account's (S-1-12-1-…), as in HKEY_USERS. */
export const LOCAL_USER_SID = 'S-1-5-21-1004336348-1177238915-682003330-1001';
export const ENTRA_USER_SID = 'S-1-12-1-3814935716-1223345834-2837654098-1925438221';

export interface ServiceRow {
  Name: string;
  Start: number;
  Triggered: boolean;
  State: string;
}

/** Start types and states of a stock Windows 11 client (services.msc: MpsSvc automatic, W32Time and wuauserv manual trigger start). */
export const STOCK_SERVICES: ServiceRow[] = [
  { Name: 'MpsSvc', Start: 2, Triggered: false, State: 'Running' },
  { Name: 'W32Time', Start: 3, Triggered: true, State: 'Stopped' },
  { Name: 'wuauserv', Start: 3, Triggered: true, State: 'Stopped' },
  { Name: 'UsoSvc', Start: 2, Triggered: false, State: 'Running' },
  { Name: 'TermService', Start: 3, Triggered: false, State: 'Stopped' },
  { Name: 'WinRM', Start: 3, Triggered: false, State: 'Stopped' },
];

/** Ports a stock Windows 11 client listens on (RPC 135, NetBIOS 139, SMB 445, CDPSvc 5040, Delivery Optimization 7680, RPC dynamic). */
const STOCK_LISTENING_PORTS = [135, 139, 445, 5040, 7680, 49664, 49665, 49666, 49667, 49668, 49669];

/** Get-NetTCPConnection listener rows: each port on each address. */
export function listeners(addresses: string[], ports: number[]): { Address: string; Port: number }[] {
  return addresses.flatMap((Address) => ports.map((Port) => ({ Address, Port })));
}

/** w32tm.exe's exit code for HRESULT 0x80070426 (service not started), as a signed 32-bit number. */
const W32TM_SERVICE_NOT_STARTED_EXIT = 0x80070426 - 2 ** 32;

/** secedit /export [System Access] of a stock Windows 11 22H2+ (length 0, no complexity, lockout after 10). */
const STOCK_SYSTEM_ACCESS = [
  'MinimumPasswordAge = 0',
  'MaximumPasswordAge = 42',
  'MinimumPasswordLength = 0',
  'PasswordComplexity = 0',
  'PasswordHistorySize = 0',
  'LockoutBadCount = 10',
  'ResetLockoutCount = 10',
  'LockoutDuration = 10',
  'AllowAdministratorLockout = 1',
  'RequireLogonToChangePassword = 0',
  'ForceLogoffWhenHourExpire = 0',
  'NewAdministratorName = "Administrator"',
  'NewGuestName = "Guest"',
  'ClearTextPassword = 0',
  'LSAAnonymousNameLookup = 0',
  'EnableAdminAccount = 0',
  'EnableGuestAccount = 0',
];

export function baselineProbe(): ProbeDocument {
  return {
    schema: 1,
    elevated: true,
    systemDrive: 'C:',
    registry: {
      // ProductName still says Windows 10 on Windows 11 (research §5.4); ReleaseId frozen at 2009.
      os: ok({
        CurrentBuild: '26200',
        CurrentBuildNumber: '26200',
        UBR: 7171,
        DisplayVersion: '25H2',
        ReleaseId: '2009',
        EditionID: 'Professional',
        ProductName: 'Windows 10 Pro',
        InstallationType: 'Client',
      }),
      systemPolicy: ok({}),
      winlogon: ok({}),
      consoleLockPolicy: ok(null),
      standbyIdlePolicy: ok(null),
      firewallPolicyDomain: ok(null),
      firewallPolicyPrivate: ok(null),
      firewallPolicyPublic: ok(null),
      firewallPolicyStandard: ok(null),
      firewallLocalDomain: ok({ EnableFirewall: 1 }),
      firewallLocalPrivate: ok({ EnableFirewall: 1 }),
      firewallLocalPublic: ok({ EnableFirewall: 1 }),
      w32time: ok({ Type: 'NTP', NtpServer: 'time.windows.com,0x9' }),
      w32timePolicy: ok(null),
      ntpClient: ok({ Enabled: 1 }),
      ntpClientPolicy: ok(null),
      vmicTimeProvider: ok({ Enabled: 1 }),
      auPolicy: ok(null),
      auLocal: ok({}),
      updateCsp: ok(null),
      updatePause: ok({}),
      rdpPolicy: ok(null),
      rdp: ok({ fDenyTSConnections: 1 }),
      rdpTcp: ok({ PortNumber: 3389, UserAuthentication: 1 }),
      deviceLock: ok(null),
    },
    services: ok(STOCK_SERVICES.map((s) => ({ ...s }))),
    userHives: ok([
      { Sid: '.DEFAULT', Policy: null, User: { ScreenSaveActive: '1' } },
      { Sid: 'S-1-5-19', Policy: null, User: { ScreenSaveActive: '1' } },
      { Sid: 'S-1-5-20', Policy: null, User: { ScreenSaveActive: '1' } },
      // Screen saver "(None)": no SCRNSAVE.EXE value (Microsoft Learn, HKCU\Control Panel\Desktop).
      { Sid: LOCAL_USER_SID, Policy: null, User: { ScreenSaveActive: '1' } },
      { Sid: 'S-1-5-18', Policy: null, User: { ScreenSaveActive: '1' } },
    ]),
    // Balanced plan on a laptop: sleep after 30 min plugged in, 15 min on battery; sign-in on wake.
    power: ok({ ACConsoleLock: 1, DCConsoleLock: 1, ACStandbyIdle: 1800, DCStandbyIdle: 900 }),
    computer: ok({ PartOfDomain: false, EntraJoined: false }),
    firewallProfiles: ok([
      { Name: 'Domain', Enabled: 'True', DefaultInboundAction: 'Block' },
      { Name: 'Private', Enabled: 'True', DefaultInboundAction: 'Block' },
      { Name: 'Public', Enabled: 'True', DefaultInboundAction: 'Block' },
    ]),
    // 397568 = 0x061100: on, Microsoft, signatures up to date (idera, neophob).
    antivirusProducts: ok([{ displayName: 'Windows Defender', productState: 397568 }]),
    firewallProducts: ok([]),
    // Get-MpComputerStatus, Microsoft Learn example (2024).
    defender: ok({
      AMRunningMode: 'Normal',
      AMServiceEnabled: true,
      AntivirusEnabled: true,
      RealTimeProtectionEnabled: true,
      AntivirusSignatureAge: 1,
      DefenderSignaturesOutOfDate: false,
      IsTamperProtected: true,
    }),
    bitlocker: ok([
      {
        DriveLetter: 'C:',
        VolumeType: 0,
        ProtectionStatus: 1,
        ConversionStatus: 1,
        EncryptionPercentage: 100,
        EncryptionMethod: 6,
        KeyProtectorTypes: [1, 3],
        ReturnValues: [0, 0, 0, 0],
        Mounted: true,
      },
    ]),
    listeningPorts: ok(listeners(['0.0.0.0', '::'], STOCK_LISTENING_PORTS)),
    // W32Time between its triggers: w32tm fails with the HRESULT 0x80070426. Recorded (German) in
    // Linuxfabrik/monitoring-plugins check-plugins/ntp-w32tm/unit-test/stdout/de-service-not-running;
    // completed: the exit code, the HRESULT as a signed 32-bit number (how w32tm.exe exits).
    w32tm: ok({
      ExitCode: W32TM_SERVICE_NOT_STARTED_EXIT,
      Lines: ['Folgender Fehler ist aufgetreten: Der Dienst wurde nicht gestartet. (0x80070426)'],
    }),
    // Completed (no recording of these two events' times was found): the last trigger start synchronised two hours ago.
    timeEvents: ok([
      { Id: 37, TimeCreated: '2026-11-21T10:02:11Z' },
      { Id: 35, TimeCreated: '2026-11-21T10:02:10Z' },
    ]),
    secedit: ok({ ExitCode: 0, SystemAccess: STOCK_SYSTEM_ACCESS }),
    accountPolicy: ok({ MinPasswordLength: 0 }),
  };
}

/** The probe's stdout: compact JSON (ConvertTo-Json -Compress) and the console's CRLF. */
export function probeStdout(doc: ProbeDocument): string {
  return `${JSON.stringify(doc)}\r\n`;
}

export function service(doc: ProbeDocument, name: string): ServiceRow | undefined {
  return ((doc.services as { value: ServiceRow[] }).value ?? []).find((s) => s.Name === name);
}

// ---- Changes to the baseline machine, shared by the fixture cases ------------------------------

export const registry = (doc: ProbeDocument, name: string, values: Record<string, unknown> | null) => {
  doc.registry[name] = ok(values);
};
export const setService = (doc: ProbeDocument, name: string, change: Partial<{ Start: number; Triggered: boolean; State: string }>) => {
  const row = service(doc, name);
  if (row) Object.assign(row, change);
  else (doc.services as { value: unknown[] }).value.push({ Name: name, Start: 3, Triggered: false, State: 'Stopped', ...change });
};
export const osValues = (doc: ProbeDocument, values: Record<string, unknown>) => {
  const current = (doc.registry.os as { value: Record<string, unknown> }).value;
  registry(doc, 'os', { ...current, ...values });
};
export const userHives = (doc: ProbeDocument, hives: unknown[]) => {
  const system = ['.DEFAULT', 'S-1-5-19', 'S-1-5-20', 'S-1-5-18'].map((Sid) => ({ Sid, Policy: null, User: { ScreenSaveActive: '1' } }));
  doc.userHives = ok([...system, ...hives]);
};
export const secureSaver = {
  ScreenSaveActive: '1',
  ScreenSaverIsSecure: '1',
  ScreenSaveTimeOut: '600',
  'SCRNSAVE.EXE': 'C:\\Windows\\system32\\scrnsave.scr',
};
export const bitlockerOs = (doc: ProbeDocument, change: Record<string, unknown>) => {
  const [os] = (doc.bitlocker as { value: Record<string, unknown>[] }).value;
  Object.assign(os!, change);
};
export const listen = (doc: ProbeDocument, addresses: string[], ports: number[]) => {
  (doc.listeningPorts as { value: unknown[] }).value.push(...listeners(addresses, ports));
};
export const defender = (doc: ProbeDocument, change: Record<string, unknown>) => {
  Object.assign((doc.defender as { value: Record<string, unknown> }).value, change);
};
