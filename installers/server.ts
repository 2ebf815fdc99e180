// The reference server as a Linux service: a Debian and an RPM package of `device-agent-server`
// with a hardened systemd unit running it as its own system user. The server runs on the Node 24
// runtime the agent's executables start from (the same stripped copy, scripts/package.mjs), beside
// its CommonJS bundle and better-sqlite3's Node-API addon; not as a single executable, because
// its SQLite addon, the WAL checkpoint thread (which loads that addon by path) and `--workers`
// (node:cluster forks the main script) want real files. docs/server.md, "Running the server as a
// service", is the administrator's side.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { preparedRuntime } from '../scripts/package.mjs';
import { VERSION } from '../src/version';
import { RELOAD_AFTER_REMOVAL, buildDebPackage, buildRpmPackage, type LinuxArch, type LinuxPackage, type StagedFile } from './stage';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');

const SERVER_PACKAGE = 'device-agent-server';
const SERVER_UNIT = `${SERVER_PACKAGE}.service`;
/** The service's system user and group. */
const SERVER_USER = 'device-agent-server';
const SERVER_LIB = '/usr/lib/device-agent-server';
const SERVER_CONF_DIR = '/etc/device-agent-server';
export const SERVER_ENV_FILE = `${SERVER_CONF_DIR}/server.env`;
const SERVER_STATE_DIR = '/var/lib/device-agent-server';
/**
 * Open files allowed to the service. `serve` caps its connections at this limit less 64 descriptors
 * (src/server/limitDefaults.ts): 65,472 connections by default, each agent holding at most one.
 */
export const SERVER_OPEN_FILES = 65_536;
const NODE = `${SERVER_LIB}/node`;
/** The bundle, without an extension: `node` runs it as CommonJS and the CLI names itself after it. */
const BUNDLE = `${SERVER_LIB}/device-agent-server`;
const SQLITE_MODULE = 'better-sqlite3-napi';
const SUMMARY = 'Reference server of the Device Agent API';
const LONG_DESCRIPTION = [
  'Enrolls devices, receives their heartbeats and posture results, and serves an admin API and',
  'web console, on SQLite or PostgreSQL; runs as the device-agent-server systemd service.',
];

/**
 * The hardened unit. The server needs the network, its state directory and the files named in
 * server.env: everything else is read-only or hidden, no capabilities (ports from 1024 up; a
 * lower port is a drop-in, docs/server.md), system calls of ordinary services only. Not
 * `MemoryDenyWriteExecute=`: V8 compiles JavaScript into executable memory.
 */
function serverUnit(): string {
  return [
    '[Unit]',
    `Description=${SUMMARY}`,
    'Documentation=https://github.com/device-agent/device-agent/blob/main/docs/server.md',
    'Wants=network-online.target',
    // A PostgreSQL on this machine is up before the server and stopped after it.
    'After=network-online.target postgresql.service',
    '',
    '[Service]',
    'Type=simple',
    `User=${SERVER_USER}`,
    `Group=${SERVER_USER}`,
    `EnvironmentFile=${SERVER_ENV_FILE}`,
    // $DEVICE_AGENT_SERVER_OPTIONS unbraced: systemd splits it into words, one per flag and value.
    `ExecStart=${NODE} ${BUNDLE} serve $DEVICE_AGENT_SERVER_OPTIONS`,
    // SIGHUP: `serve --tls-cert` reads its certificate and key again (open connections keep
    // theirs; the --workers supervisor passes it to every worker); without TLS it is logged and
    // ignored. The shell's own kill: a minimal system may have no /bin/kill.
    `ExecReload=/bin/sh -c 'kill -HUP "$$MAINPID"'`,
    'Restart=on-failure',
    'RestartSec=2s',
    // Exit 2 is a usage error (a bad flag, a database newer than this program): restarting repeats it.
    'RestartPreventExitStatus=2',
    // In-flight requests finish on SIGTERM; the database is closed last.
    'TimeoutStopSec=30s',
    `LimitNOFILE=${SERVER_OPEN_FILES}`,
    // The journal names the lines after the service, not after the runtime (`node`).
    `SyslogIdentifier=${SERVER_PACKAGE}`,
    'UMask=0077',
    `StateDirectory=${SERVER_PACKAGE}`,
    'StateDirectoryMode=0700',
    'ProtectSystem=strict',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'NoNewPrivileges=yes',
    'CapabilityBoundingSet=',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'ProtectProc=invisible',
    // AF_UNIX: PostgreSQL's local socket and the journal.
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6',
    'RestrictNamespaces=yes',
    'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes',
    'LockPersonality=yes',
    'RemoveIPC=yes',
    'SystemCallArchitectures=native',
    'SystemCallFilter=@system-service',
    // A refused call fails with EPERM (libuv falls back from io_uring) instead of killing the process.
    'SystemCallErrorNumber=EPERM',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** The configuration the unit reads; an administrator's file after installation (a conffile). */
function serverEnv(): string {
  return `# device-agent-server settings, read by ${SERVER_UNIT}. After a change:
#   systemctl restart ${SERVER_PACKAGE}
# Every \`serve\` flag goes in DEVICE_AGENT_SERVER_OPTIONS (device-agent-server serve --help), one line,
# no quotes. Files it names must be readable by the ${SERVER_USER} user (this directory is
# root:${SERVER_USER} 0750): a TLS key here with mode 0640 and that group; a PostgreSQL password
# file owner-only, owned by ${SERVER_USER} (mode 0600). docs/server.md, "Running the server as a service".

# The database: a SQLite file in the state directory, or postgres://user@host:5432/database
# (with --db-password-file ${SERVER_CONF_DIR}/db-password in the options below).
DEVICE_AGENT_SERVER_DB=${SERVER_STATE_DIR}/server.db

# Behind a TLS-terminating proxy on this machine, as here; for HTTPS on the server itself:
#   --host 0.0.0.0 --port 8443 --tls-cert ${SERVER_CONF_DIR}/tls/cert.pem --tls-key ${SERVER_CONF_DIR}/tls/key.pem --public-url https://agents.example.com:8443
DEVICE_AGENT_SERVER_OPTIONS=--host 127.0.0.1 --port 8080
`;
}

/** systemd-sysusers creates the user at boot too: an image built with the package installed but never configured still starts. */
function sysusersConf(): string {
  return `# The ${SERVER_PACKAGE} service's user (installers/server.ts).\nu ${SERVER_USER} - "Device Agent API server" ${SERVER_STATE_DIR} /usr/sbin/nologin\n`;
}

const NPM_ARCH: Record<LinuxArch, string> = { x64: 'linux-x64', arm64: 'linux-arm64' };

/** better-sqlite3 13 (Node-API): its JavaScript and the one prebuilt addon for `arch`. */
function sqliteModuleFiles(arch: LinuxArch): StagedFile[] {
  const dir = dirname(createRequire(join(ROOT, 'package.json')).resolve(`${SQLITE_MODULE}/package.json`));
  const target = `${SERVER_LIB}/node_modules/${SQLITE_MODULE}`;
  const scripts = readdirSync(join(dir, 'lib'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));
  return [
    ...['package.json', 'LICENSE', ...scripts.sort().map((name) => `lib/${name}`), `prebuilds/${NPM_ARCH[arch]}.node`].map((name) => ({
      path: `${target}/${name}`,
      mode: 0o644,
      from: join(dir, name),
    })),
  ];
}

interface ServerPackageOptions {
  arch: LinuxArch;
  outDir: string;
  /** The server bundle (scripts/build.mjs); default dist/device-agent-server.cjs. */
  bundle?: string;
  /** The package's version; default the program's (tests build an older one to upgrade from). */
  version?: string;
  compression?: 'xz' | 'gzip';
}

/** What both packages install; `unitDir` is where each distribution keeps vendor units. */
function serverFiles(options: { arch: LinuxArch; bundle: string; unitDir: string }): StagedFile[] {
  return [
    { path: SERVER_LIB, mode: 0o755 },
    { path: NODE, mode: 0o755, from: preparedRuntime(NPM_ARCH[options.arch]) },
    { path: BUNDLE, mode: 0o644, from: options.bundle },
    ...sqliteModuleFiles(options.arch),
    { path: `${SERVER_LIB}/server-hook`, mode: 0o755, from: join(HERE, 'unix', 'server-hook') },
    {
      path: '/usr/bin/device-agent-server',
      mode: 0o755,
      content: `#!/bin/sh\n# device-agent-server on the Node runtime it ships with (installers/server.ts).\nexec ${NODE} ${BUNDLE} "$@"\n`,
    },
    { path: `${options.unitDir}/${SERVER_UNIT}`, mode: 0o644, content: serverUnit() },
    { path: `/usr/lib/sysusers.d/${SERVER_PACKAGE}.conf`, mode: 0o644, content: sysusersConf() },
    { path: SERVER_CONF_DIR, mode: 0o750 },
    { path: SERVER_ENV_FILE, mode: 0o644, content: serverEnv() },
    {
      path: `/usr/share/doc/${SERVER_PACKAGE}/copyright`,
      mode: 0o644,
      content: `${SERVER_PACKAGE} ${VERSION}\nLicense: Apache-2.0\nIncludes Node.js (MIT) and better-sqlite3 (MIT) with SQLite (public domain).\n`,
    },
  ];
}

const defaultBundle = () => join(ROOT, 'dist', 'device-agent-server.cjs');

function serverPackage(options: ServerPackageOptions, unitDir: string): LinuxPackage {
  return {
    name: SERVER_PACKAGE,
    version: options.version ?? VERSION,
    arch: options.arch,
    summary: SUMMARY,
    longDescription: LONG_DESCRIPTION,
    files: serverFiles({ arch: options.arch, bundle: options.bundle ?? defaultBundle(), unitDir }),
    outDir: options.outDir,
    compression: options.compression,
  };
}

export function buildServerDeb(options: ServerPackageOptions): string {
  return buildDebPackage(serverPackage(options, '/lib/systemd/system'), {
    section: 'net',
    // useradd (passwd) creates the service's user where systemd-sysusers is missing.
    depends: 'libc6 (>= 2.28), passwd',
    scriptsDir: join(HERE, 'debian-server'),
    conffiles: [SERVER_ENV_FILE],
  });
}

export function buildServerRpm(options: ServerPackageOptions): string {
  const hook = `${SERVER_LIB}/server-hook`;
  return buildRpmPackage(serverPackage(options, '/usr/lib/systemd/system'), {
    requires: ['glibc >= 2.28', 'shadow-utils'],
    // The program's directory as a whole: its subdirectories belong to the package too.
    wholeDirs: [SERVER_LIB],
    configFiles: [SERVER_ENV_FILE],
    scriptlets: [
      '%post',
      '# $1 is 1 on installation, 2 on upgrade.',
      `if [ "$1" -eq 1 ]; then ${hook} install; else ${hook} upgrade; fi`,
      '',
      '%preun',
      '# Only on removal; an upgrade keeps the service running until %post restarts it.',
      `if [ "$1" -eq 0 ]; then ${hook} remove; fi`,
      '',
      // RPM has no purge: the database and the configuration stay (docs/server.md).
      '%postun',
      RELOAD_AFTER_REMOVAL,
    ],
  });
}
