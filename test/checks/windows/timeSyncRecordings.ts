// TIME_SYNC fixture cases built on `w32tm /query /status [/verbose]` output recorded on real
// machines by other projects, line for line. What a recording does not show (the registry
// configuration, the service state, the System log) is the baseline's, or named in the case as
// completed. The probe hands w32tm's lines over as printed; the check reads only their numbers.
import type { WindowsFixtureCase } from './fixtureCases';
import { err, ok, service, type ProbeDocument } from './probeDocument';

export const LINUXFABRIK = 'Linuxfabrik/monitoring-plugins check-plugins/ntp-w32tm/unit-test/stdout';
const CHECKMK = 'Checkmk/checkmk tests/unit/cmk/plugins/windows/agent_based/test_w32time_status.py';
const CHECKMK_TOKENS = `${CHECKMK} (the agent's whitespace-split tokens, rejoined with single spaces)`;

const lines = (text: string) => text.replace(/\n$/, '').split('\n');

/** Files of Linuxfabrik's ntp-w32tm unit tests, each the stdout of w32tm on a real machine (de-service-not-running is the baseline's). */
export const LINUXFABRIK_W32TM = {
  'de-access-denied': ['Folgender Fehler ist aufgetreten: Zugriff verweigert (0x80070005)'],
  'de-unsynced-local-cmos': lines(`Sprungindikator: 3(nicht synchronisiert)
Stratum: 0 (nicht angegeben)
Präzision: -23 (119.209ns pro Tick)
Stammverzögerung: 0.0000000s
Stammabweichung: 0.0000000s
Referenz-ID: 0x00000000 (nicht angegeben)
Letzte erfolgr. Synchronisierungszeit: nicht angegeben
Quelle: Local CMOS Clock
Abrufintervall: 6 (64s)

Phasendifferenz: 0.0000000s
Taktfrequenz: 0.0156250s
Statuscomputer: 0 (Löschen)
Zeitquellenkennzeichen: 0 (Keine)
Serverrolle: 0 (Keine)
Letzter Synchronierungsfehler: 1 (Der Computer wurde nicht synchronisiert, da keine Zeitdaten verfügbar waren.)
Zeit seit der letzten erfolgr. Synchronisierungszeit: 20.4338277s
`),
  'de-stratum-5-synced': lines(`Sprungindikator: 0(keine Warnung)
Stratum: 5 (Sekundärreferenz - synchr. über (S)NTP)
Präzision: -23 (119.209ns pro Tick)
Stammverzögerung: 0.0165359s
Stammabweichung: 7.7713661s
Referenz-ID: 0x682895BD (Quell-IP:  104.40.149.189)
Letzte erfolgr. Synchronisierungszeit: 25.09.2026 06:35:07
Quelle: time.windows.com,0x8
Abrufintervall: 6 (64s)

Phasendifferenz: -0.0000433s
Taktfrequenz: 0.0156250s
Statuscomputer: 1 (Anhalten)
Zeitquellenkennzeichen: 0 (Keine)
Serverrolle: 0 (Keine)
Letzter Synchronierungsfehler: 0 (Der Befehl wurde erfolgreich ausgeführt.)
Zeit seit der letzten erfolgr. Synchronisierungszeit: 51.6640258s
`),
  'de-last-sync-error-wrapped': lines(`Sprungindikator: 0(keine Warnung)
Stratum: 5 (Sekundärreferenz - synchr. über (S)NTP)
Präzision: -23 (119.209ns pro Tick)
Stammverzögerung: 0.0365169s
Stammabweichung: 0.0515266s
Referenz-ID: 0x14653909 (Quell-IP:  20.101.57.9)
Letzte erfolgr. Synchronisierungszeit: 28.09.2026 07:26:42
Quelle: time.windows.com,0x8 
Abrufintervall: 8 (256s)

Phasendifferenz: -0.0008992s
Taktfrequenz: 0.0156250s
Statuscomputer: 2 (Sync)
Zeitquellenkennzeichen: 0 (Keine)
Serverrolle: 0 (Keine)
Letzter Synchronierungsfehler: 2 (Der Computer wurde nicht synchronisiert, da nur veraltete Zeitdaten
verfügbar waren.)
Zeit seit der letzten erfolgr. Synchronisierungszeit: 185.8847932s
`),
  'stratum-1-vm-ic': lines(`Leap Indicator: 0(no warning)
Stratum: 1 (primary reference - syncd by radio clock)
Precision: -23 (119.209ns per tick)
Root Delay: 0.0003538s
Root Dispersion: 0.0100002s
ReferenceId: 0x00000000 (unspecified)
Last Successful Sync Time: 5/23/2023 7:51:39 PM
Source: VM IC Time Synchronization Provider
Poll Interval: 6 (64s)
 
Phase Offset: -0.0000013s
ClockRate: 0.0156250s
State Machine: 2 (Sync)
Time Source Flags: 3 (Authenticated Hardware )
Server Role: 0 (None)
Last Sync Error: 0 (The command completed successfully.)
Time since Last Good Sync Time: 15.7344985s
`),
  'stratum-5-dc-authenticated': lines(`Leap Indicator: 0(no warning)
Stratum: 5 (secondary reference - syncd by (S)NTP)
Precision: -6 (15.625ms per tick)
Root Delay: 0.1093000s
Root Dispersion: 0.2018032s
ReferenceId: 0xABCDEFAB (source IP:  n.n.n.n)
Last Successful Sync Time: 11/18/2012 2:26:21 AM
Source: DCNAME.company.com
Poll Interval: 14 (16384s)

Phase Offset: -0.0027702s
ClockRate: 0.0156001s
State Machine: 2 (Sync)
Time Source Flags: 2 (Authenticated )
Server Role: 0 (None)
Last Sync Error: 0 (The command completed successfully.)
Time since Last Good Sync Time: 10651.6021203s
`),
  'last-sync-too-old': lines(`Leap Indicator: 0(no warning)
Stratum: 4 (secondary reference - syncd by (S)NTP)
Precision: -6 (15.625ms per tick)
Root Delay: 0.0937500s
Root Dispersion: 1.0042565s
ReferenceId: 0xDEADBEEF (source IP:  n.n.n.n)
Last Successful Sync Time: 10/24/2012 8:25:56 AM
Source: DCName.acmecorp.com
Poll Interval: 11 (2048s)

Phase Offset: 0.1063193s
ClockRate: 0.0156005s
State Machine: 1 (Hold)
Time Source Flags: 2 (Authenticated )
Server Role: 0 (None)
Last Sync Error: 0 (The command completed successfully.)
Time since Last Good Sync Time: 38943.4367708s
`),
  'unsynced-local-cmos-poll10': lines(`Leap Indicator: 3(not synchronized)
Stratum: 0 (unspecified)
Precision: -23 (119.209ns per tick)
Root Delay: 0.0000000s
Root Dispersion: 0.0000000s
ReferenceId: 0x00000000 (unspecified)
Last Successful Sync Time: unspecified
Source: Local CMOS Clock
Poll Interval: 10 (1024s)

Phase Offset: 0.0000000s
ClockRate: 0.0156250s
State Machine: 0 (Unset)
Time Source Flags: 0 (None)
Server Role: 0 (None)
Last Sync Error: 1 (The computer did not resync because no time data was available.)
Time since Last Good Sync Time: 19.4881785s
`),
};

/** Linuxfabrik/monitoring-plugins check-plugins/ntp-w32tm/README.md, "Usage Examples": NTP configured, the peer not answering. */
const LINUXFABRIK_README_PEER_SILENT = lines(`Leap Indicator: 3(not synchronized)
Stratum: 0 (unspecified)
Precision: -23 (119.209ns per tick)
Root Delay: 0.0267908s
Root Dispersion: 0.0402331s
ReferenceId: 0x00000000 (unspecified)
Last Successful Sync Time: 9/16/2023 12:52:13 PM
Source: time.windows.com,0x8
Poll Interval: 6 (64s)

Phase Offset: 0.7679486s
ClockRate: 0.0156250s
State Machine: 0 (Unset)
Time Source Flags: 0 (None)
Server Role: 0 (None)
Last Sync Error: 1 (The computer did not resync because no time data was available.)
Time since Last Good Sync Time: 19.2218793s
`);

/** collingeorge/Set-NTPConfig README.md, "Example output": the status right after its w32tm /query /configuration. */
const SET_NTPCONFIG_FREE_RUNNING = lines(`Leap Indicator: 0(no warning)
Stratum: 1 (primary reference - syncd by radio clock)
Precision: -23 (119.209ns per tick)
Root Delay: 0.0000000s
Root Dispersion: 10.0000000s
ReferenceId: 0x4C4F434C (source name:  "LOCL")
Last Successful Sync Time: 5/30/2025 09:06:45
Source: Local CMOS Clock
Poll Interval: 6 (64s)
`);

/** Checkmk's recorded agent sections (Chinese, French and German Windows; German with OEM code-page bytes as \\x escapes). */
const CHECKMK_W32TM = {
  EN_GOOD_SYNC: [
    'Leap Indicator: 0(no warning)',
    'Stratum: 4 (secondary reference - syncd by (S)NTP)',
    'Precision: -23 (119.209ns per tick)',
    'Root Delay: 0.0000758s',
    'Root Dispersion: 0.0100002s',
    'ReferenceId: 0x564D5450 (source IP:  86.77.84.80)',
    'Last Successful Sync Time: 9/15/2025 12:01:31 AM',
    'Source: VM IC Time Synchronization Provider',
    'Poll Interval: 6 (64s)',
    'Phase Offset: 0.0000869s',
    'ClockRate: 0.0156249s',
    'State Machine: 2 (Sync)',
    'Time Source Flags: 3 (Authenticated Hardware )',
    'Server Role: 0 (None)',
    'Last Sync Error: 0 (The command completed successfully.)',
    'Time since Last Good Sync Time: 19.4823644s',
  ],
  ZH_GOOD_SYNC: [
    'Leap 指示符: 0(无警告)',
    '层次: 2 (次引用 - 与(S)NTP 同步)',
    '精度: -6 (每刻度 15.625ms)',
    '根延迟: 0.0092768s',
    '根分散: 8.2606345s',
    '引用 ID: 0x81861B7B (源 IP:  129.134.27.123)',
    '上次成功同步时间: 2025/9/14 23:55:21',
    '源: time.facebook.com',
    '轮询间隔: 6 (64s)',
    '相位偏移: 0.0000012s',
    'ClockRate: 0.0156250s',
    '计算机状态: 2 (同步)',
    '时间源标志:0 (无)',
    '服务器角色: 0 (无)',
    '上次同步错误: 0 (成功地执行了命令。)',
    '上次成功同步时间后的时间: 13.4795503s',
  ],
  FR_GOOD_SYNC: [
    'Indicateur de dérive : 0(Aucun avertissement)',
    'Couche : 4 (Référence secondaire, synchronisée par (S)NTP)',
    'Précision : -23 (119.209ns par battement)',
    'Délai de racine : 0.1303487s',
    'Dispersion de racine : 0.0100002s',
    'ID de référence : 0x564D5450 (IP de la source :  86.77.84.80)',
    'Heure de la dernière synchronisation réussie : 15/09/2025 01:11:10',
    'Source : VM IC Time Synchronization Provider',
    'Intervalle d’interrogation : 6 (64s)',
    'Décalage de phase : 0.0015321s',
    'Fréquence d’horloge : 0.0156249s',
    'Ordinateur d’état : 1 (Attente)',
    'Indicateur de source de temps : 3 (Authentifié Matériel )',
    'Rôle de serveur : 0 (Aucun)',
    'Erreur lors de la dernière synchronisation : 0 (La commande s’est terminée correctement.)',
    'Durée écoulée depuis l’heure de la dernière synchronisation réussie : 22.0930147s',
  ],
  DE_LINE_WRAP: [
    'Sprungindikator: 0(keine Warnung)',
    'Stratum: 3 (Sekund\\x84rreferenz - synchr. \\x81ber (S)NTP)',
    'Pr\\x84zision: -23 (119.209ns pro Tick)',
    'Stammverz\\x94gerung: 0.0336332s',
    'Stammabweichung: 0.1054265s',
    'Referenz-ID: 0xAC689AB6 (Quell-IP:  172.104.154.182)',
    'Letzte erfolgr. Synchronisierungszeit: 15.09.2025 13:12:56',
    'Quelle: de.pool.ntp.org',
    'Abrufintervall: 13 (8192s)',
    'Phasendifferenz: -0.0003717s',
    'Taktfrequenz: 0.0156249s',
    'Statuscomputer: 2 (Sync)',
    'Zeitquellenkennzeichen: 0 (Keine)',
    'Serverrolle: 0 (Keine)',
    'Letzter Synchronierungsfehler: 2 (Der Computer wurde nicht synchronisiert, da nur veraltete Zeitdaten',
    'verf\\x81gbar waren.)',
    'Zeit seit der letzten erfolgr. Synchronisierungszeit: 4812.7981071s',
  ],
};

/** w32tm printed these lines: it answered, so W32Time was running (completed where the recording does not show the service). */
export function w32tm(doc: ProbeDocument, printed: string[], exitCode = 0): void {
  doc.w32tm = ok({ ExitCode: exitCode, Lines: printed });
  const row = service(doc, 'W32Time');
  if (exitCode === 0 && row) Object.assign(row, { State: 'Running' });
}

const COMPLETED_RUNNING =
  'completed: the stock registry configuration (NTP, time.windows.com,0x9) and W32Time running, which an answering w32tm implies';

export const TIME_SYNC_RECORDINGS: WindowsFixtureCase[] = [
  {
    check: 'TIME_SYNC',
    name: 'pass-german-w32tm-synced',
    source: `${LINUXFABRIK}/de-stratum-5-synced; ${COMPLETED_RUNNING}`,
    description: 'German Windows synchronised with time.windows.com (stratum 5): translated labels, the numbers read by position',
    machine: (doc) => w32tm(doc, LINUXFABRIK_W32TM['de-stratum-5-synced']),
    expect: {
      status: 'PASS',
      evidence: { state_source: 'w32tm', leap_indicator: 0, stratum: 5, reference: 'peer', last_sync_age_s: 52, rule: 'synchronized' },
    },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-german-never-synchronized',
    source: `${LINUXFABRIK}/de-unsynced-local-cmos; ${COMPLETED_RUNNING}`,
    description: 'German Windows configured for NTP, W32Time running, never synchronised: leap indicator 3, stratum 0, Local CMOS Clock',
    machine: (doc) => w32tm(doc, LINUXFABRIK_W32TM['de-unsynced-local-cmos']),
    expect: {
      status: 'FAIL',
      evidence: { type: 'NTP', ntp_servers: 1, leap_indicator: 3, stratum: 0, reference: 'unspecified', rule: 'not_synchronized' },
    },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-german-last-sync-error-wrapped',
    source: `${LINUXFABRIK}/de-last-sync-error-wrapped; ${COMPLETED_RUNNING}`,
    description: 'German Windows whose "last sync error" message wraps onto a second line (stale data once, synchronised 3 minutes ago)',
    machine: (doc) => w32tm(doc, LINUXFABRIK_W32TM['de-last-sync-error-wrapped']),
    expect: { status: 'PASS', evidence: { stratum: 5, last_sync_age_s: 186, rule: 'synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'unknown-german-w32tm-denied',
    source: `${LINUXFABRIK}/de-access-denied; completed: the System log refused to the same account (no recording of that)`,
    description: 'w32tm refused with 0x80070005 and the Time-Service events unreadable: nothing says when the clock last synchronised',
    machine: (doc) => {
      w32tm(doc, LINUXFABRIK_W32TM['de-access-denied'], 0x80070005 - 2 ** 32);
      doc.timeEvents = err('access_denied');
    },
    expect: { status: 'UNKNOWN', evidence: { reason: 'permission_denied', w32tm_error: 'access_denied', probe_error: 'access_denied' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-never-synchronized-local-cmos',
    source: `${LINUXFABRIK}/unsynced-local-cmos-poll10; ${COMPLETED_RUNNING}`,
    description: 'English Windows configured for NTP with W32Time running that has never synchronised (Source: Local CMOS Clock)',
    machine: (doc) => w32tm(doc, LINUXFABRIK_W32TM['unsynced-local-cmos-poll10']),
    expect: { status: 'FAIL', evidence: { leap_indicator: 3, stratum: 0, rule: 'not_synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-ntp-peer-not-answering',
    source:
      'Linuxfabrik/monitoring-plugins check-plugins/ntp-w32tm/README.md (Usage Examples output); completed: the registry configuration (NTP, time.windows.com,0x8 as the status names) and W32Time running',
    description:
      'Configured for time.windows.com, synchronised once, now "no time data was available": leap indicator 3 (the configuration alone PASSed this)',
    machine: (doc) => {
      doc.registry.w32time = ok({ Type: 'NTP', NtpServer: 'time.windows.com,0x8' });
      w32tm(doc, LINUXFABRIK_README_PEER_SILENT);
    },
    expect: { status: 'FAIL', evidence: { type: 'NTP', ntp_servers: 1, leap_indicator: 3, rule: 'not_synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-free-running-local-clock',
    source:
      'collingeorge/Set-NTPConfig README.md ("Example output": its w32tm /query /configuration gives Type NTP, four NtpServer peers, NtpClient Enabled 1; then w32tm /query /status)',
    description:
      'Four NTP peers configured, yet the clock free-runs on the local CMOS clock: leap indicator 0 and stratum 1, but ReferenceId LOCL',
    machine: (doc) => {
      doc.registry.w32time = ok({
        Type: 'NTP',
        NtpServer: 'time.cloudflare.com,0x9 time.google.com,0x9 time.nist.gov,0x9 time.apple.com,0x9',
      });
      w32tm(doc, SET_NTPCONFIG_FREE_RUNNING);
    },
    expect: { status: 'FAIL', evidence: { ntp_servers: 4, leap_indicator: 0, stratum: 1, reference: 'local_clock', rule: 'local_clock' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-hyperv-guest-vm-ic-provider',
    source: `${LINUXFABRIK}/stratum-1-vm-ic (also the sample in Microsoft Learn "Windows Time service tools and settings"); ${COMPLETED_RUNNING}`,
    description:
      'Hyper-V guest synchronised by the VM IC time provider: ReferenceId 0x00000000 with stratum 1 is a source, not "unspecified"',
    machine: (doc) => w32tm(doc, LINUXFABRIK_W32TM['stratum-1-vm-ic']),
    expect: {
      status: 'PASS',
      evidence: { stratum: 1, reference: 'unspecified', vmic_provider_enabled: true, last_sync_age_s: 16, rule: 'synchronized' },
    },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-domain-member-in-hold',
    source: `${LINUXFABRIK}/last-sync-too-old; completed: Type NT5DS, domain joined and W32Time running (the source is a domain controller)`,
    description:
      'Domain member in state Hold, last good sync 11 hours ago (within the eight-day limit: Linuxfabrik warns at 8 hours for its own reasons)',
    machine: (doc) => {
      doc.registry.w32time = ok({ Type: 'NT5DS' });
      doc.computer = ok({ PartOfDomain: true, EntraJoined: false });
      w32tm(doc, LINUXFABRIK_W32TM['last-sync-too-old']);
    },
    expect: { status: 'PASS', evidence: { type: 'NT5DS', stratum: 4, last_sync_age_s: 38943, rule: 'synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-hyperv-vmtp-reference',
    source: `${CHECKMK_TOKENS}: EN_GOOD_SYNC; ${COMPLETED_RUNNING}`,
    description: 'Hyper-V guest whose ReferenceId is VMTP (the host clock), state Sync',
    machine: (doc) => w32tm(doc, CHECKMK_W32TM.EN_GOOD_SYNC),
    expect: { status: 'PASS', evidence: { stratum: 4, reference: 'hyperv', rule: 'synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-chinese-locale',
    source: `${CHECKMK_TOKENS}: ZH_GOOD_SYNC; ${COMPLETED_RUNNING}`,
    description: 'Chinese Windows synchronised with time.facebook.com: every label translated, one line without a space after its colon',
    machine: (doc) => w32tm(doc, CHECKMK_W32TM.ZH_GOOD_SYNC),
    expect: { status: 'PASS', evidence: { stratum: 2, reference: 'peer', last_sync_age_s: 13, rule: 'synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-french-locale',
    source: `${CHECKMK_TOKENS}: FR_GOOD_SYNC; ${COMPLETED_RUNNING}`,
    description: 'French Windows (labels end in " :") synchronised by the Hyper-V provider',
    machine: (doc) => w32tm(doc, CHECKMK_W32TM.FR_GOOD_SYNC),
    expect: { status: 'PASS', evidence: { stratum: 4, reference: 'hyperv', last_sync_age_s: 22, rule: 'synchronized' } },
  },
  {
    check: 'TIME_SYNC',
    name: 'pass-german-oem-codepage-wrapped',
    source: `${CHECKMK_TOKENS}: DE_LINE_WRAP; ${COMPLETED_RUNNING}`,
    description: 'German Windows read through the OEM code page (umlauts garbled) with a wrapped message: the numbers still read',
    policy: { timeSync: { maxOffsetSeconds: 1 } },
    machine: (doc) => w32tm(doc, CHECKMK_W32TM.DE_LINE_WRAP),
    expect: {
      status: 'PASS',
      evidence: { stratum: 3, last_sync_age_s: 4813, offset_measured: true, offset_s: -0.0003717, rule: 'synchronized' },
    },
  },
  {
    check: 'TIME_SYNC',
    name: 'fail-offset-above-policy',
    source: `${LINUXFABRIK}/last-sync-too-old (phase offset 0.1063193 s); completed: Type NT5DS, domain joined, W32Time running`,
    description: 'Policy timeSync.maxOffsetSeconds 0.05: the domain member is 106 ms off',
    policy: { timeSync: { maxOffsetSeconds: 0.05 } },
    machine: (doc) => {
      doc.registry.w32time = ok({ Type: 'NT5DS' });
      doc.computer = ok({ PartOfDomain: true, EntraJoined: false });
      w32tm(doc, LINUXFABRIK_W32TM['last-sync-too-old']);
    },
    expect: { status: 'FAIL', evidence: { offset_measured: true, offset_s: 0.1063193, max_offset_s: 0.05, rule: 'offset_too_large' } },
  },
];
