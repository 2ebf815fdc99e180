// device-agent-server: the bundled reference server of the Device Agent API and its admin CLI
// (contract: "Reference server CLI"). Exit codes: 0 ok, 1 unexpected error, 2 invalid input.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, relative } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { VERSION } from '../version';
import { ALL_ORGANIZATIONS, createDevice, listAllDevices, revokeDevice, showDevice } from '../server/admin';
import {
  addAdminAccount,
  createAdminToken,
  listAdminAccounts,
  listAdminTokens,
  removeAdminAccount,
  revokeAdminToken,
  setAdminPassword,
} from '../server/adminAccess';
import { endQuietlyOnClosedPipe } from './closedPipe';
import { readSecretLine } from './secretInput';
import { createSecret, listSecrets, parseLabel, revokeSecret } from '../server/enrollSecrets';
import { DEFAULT_PUBLIC_URL, PUBLIC_URL_SETTING } from '../server/publicUrl';
import {
  formatCounts,
  formatCreated,
  formatCreatedSecret,
  formatDevice,
  formatDeviceList,
  formatFleetFailures,
  formatSecretList,
  labelsText,
} from '../server/adminOutput';
import { changeDeviceLabels, labelsAuditEvent } from '../server/deviceLabels';
import { displayJson, displayText } from '../server/displayText';
import { organizationContact, setOrganizationContact } from '../server/devicePage';
import { fleetFailures } from '../server/remediation';
import { parseDatabaseLocation, type DatabaseLocation } from '../server/db/location';
import { DatabaseOpenError, openStore, type StoreOptions } from '../server/db/open';
import type { Store } from '../server/db/store';
import { DURATION_HINT, parseDuration } from '../server/duration';
import { LOG_LEVELS, type LogLevel } from '../server/logLevels';
import {
  DEFAULT_MAX_CHECK_KEYS,
  DEFAULT_REGISTRATIONS_PER_ADDRESS,
  DEFAULT_REGISTRATIONS_PER_SECRET,
  DEFAULT_DEVICE_PAGES_PER_DEVICE,
  MIN_MAX_CHECK_KEYS,
} from '../server/limitDefaults';
import { TRUST_PROXY_HINT } from '../server/forwarded';
import { parseOrigin } from '../server/publicUrl';
import { UsageError } from '../server/usage';
import { importLifecycle, lifecycleVersion, policyHistory, setPolicy, showPolicy } from '../server/policy';
import { formatExceptions, formatLifecycle, formatPolicy, formatPolicyHistory } from '../server/policyOutput';
import { grantException, listExceptions, removeException } from '../server/exceptions';
import { listAudit, recordAudit, type AuditEvent } from '../server/audit';
import { WEBHOOK_EVENTS, createWebhook, deleteWebhook, deliveryLog, listWebhooks } from '../server/webhooks';
import { formatAudit } from '../server/adminOutput';

const EXIT_UNEXPECTED = 1;
const EXIT_USAGE = 2;
const MAX_INTERVAL_SECONDS = 86_400;
const MAX_COUNT = 1_000_000_000;
/** Covers a fleet of this size; a larger fleet needs a larger cache (docs/server.md). */
const DEFAULT_DEVICE_CACHE = 100_000;
const MIB = 1024 * 1024;

function integerIn(min: number, max: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return value;
  };
}

function origin(text: string): string {
  const parsed = parseOrigin(text);
  if (parsed === undefined)
    throw new InvalidArgumentError('expected an http(s) origin such as https://agents.example.com (no path, query or credentials).');
  return parsed;
}

function duration(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new InvalidArgumentError(`expected ${DURATION_HINT}.`);
  return ms;
}

/** How this program was started, so that printed commands can be pasted as they are. */
function invocation(): string {
  const script = process.argv[1] ?? '';
  if (/\.(c?js|ts)$/.test(script)) {
    const fromHere = relative(process.cwd(), script);
    return `node ${fromHere.startsWith('..') ? script : fromHere}`;
  }
  return basename(script) || 'device-agent-server';
}

/** The database options every command shares (dbOptions()), as commander hands them over. */
interface DatabaseFlags {
  db: string;
  dbPasswordFile?: string;
  dbPoolSize?: number;
}

interface Database {
  location: DatabaseLocation;
  options: StoreOptions;
}

/** `--db` and its companions; a password inside the URL is accepted only from the environment. */
function database(command: Command): Database {
  const flags = command.opts<DatabaseFlags>();
  const location = parseDatabaseLocation(flags.db, { fromEnvironment: command.getOptionValueSource('db') === 'env' });
  if (location.engine === 'sqlite' && flags.dbPasswordFile !== undefined) {
    throw new UsageError('--db-password-file applies to a postgres:// database only');
  }
  return { location, options: { passwordFile: flags.dbPasswordFile, poolSize: flags.dbPoolSize } };
}

async function withStore<T>(command: Command, mustExist: boolean, use: (store: Store) => T | Promise<T>): Promise<T> {
  const { location, options } = database(command);
  const store = await openStore(location, { ...options, mustExist });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

function print(text: string): void {
  process.stdout.write(text);
}

/** JSON that parses to `value`, with no character that acts on a terminal (displayText.ts). */
function printJson(value: unknown): void {
  process.stdout.write(`${displayJson(value)}\n`);
}

// What commander hands each action, as declared by its options (camel-cased flags).
interface ServeOptions {
  workers: number;
  dbStatementTimeout: number;
  dbAcquireTimeout: number;
  host: string;
  port: number;
  publicUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsTicketKeys?: string;
  tlsTicketKeyRotation: number;
  trustProxy?: string;
  heartbeatInterval: number;
  postureInterval: number;
  logLevel: LogLevel;
  maxConnections?: number;
  maxConnectionsPerAddress: number;
  rateLimitHeartbeats?: number;
  rateLimitPostures?: number;
  rateLimitPostureMib: number;
  rateLimitSignIns: number;
  rateLimitRegistrations: number;
  rateLimitRegistrationsPerSecret: number;
  rateLimitDevicePages: number;
  retention: number;
  retentionResults: number;
  retentionInterval: number;
  maxCheckKeys: number;
  deviceCache: number;
  policy: boolean;
  webhookInterval: number;
}

interface CreateOptions {
  org: string;
  name?: string;
  tokenTtl: number;
  publicUrl?: string;
  json?: true;
}

interface ListOptions {
  org?: string;
  json?: true;
}

interface DeviceListOptions extends ListOptions {
  state?: string;
  platform?: string;
  failing?: string;
  hostname?: string;
  check?: string;
  status?: string;
  agentVersion?: string;
  label?: string;
  minFailing?: string;
  sort?: string;
  order?: string;
}

interface ScopeOptions {
  db: string;
  org?: string;
  allOrgs?: true;
}

interface ShowOptions {
  json?: true;
}

// Where the devices live: the same two flags on every command.
const dbOption = () =>
  new Option('--db <location>', 'SQLite database file (or sqlite:<file>), or postgres://user@host:5432/database')
    .env('DEVICE_AGENT_SERVER_DB')
    .makeOptionMandatory();
const dbPasswordFileOption = () =>
  new Option('--db-password-file <file>', 'PostgreSQL: file holding the password (default: PGPASSWORD, then ~/.pgpass)').env(
    'DEVICE_AGENT_SERVER_DB_PASSWORD_FILE',
  );

const program = new Command('device-agent-server')
  .description('Reference server of the Device Agent API, with an admin CLI')
  .version(VERSION)
  .exitOverride()
  .showHelpAfterError('(add --help for usage)')
  // The admin commands' output may go to a reader that stops early (`| head`); `serve` logs to its
  // standard output, and a closed log pipe there is a failure for its supervisor to see.
  .hook('preAction', (_program, action) => {
    if (action.name() !== 'serve') endQuietlyOnClosedPipe();
  });

program
  .command('serve')
  .description('serve the Device Agent API (creates and migrates the database when needed)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--port <port>', 'TCP port; 0 picks a free one', integerIn(0, 65_535), 8080)
  .option('--public-url <url>', 'origin agents use to reach this server (default: from --host and --port)', origin)
  .option('--tls-cert <pem>', 'serve HTTPS with this certificate chain (PEM file)')
  .option('--tls-key <pem>', 'private key of --tls-cert (PEM file)')
  .option(
    '--tls-ticket-keys <file>',
    'TLS session-ticket keys shared by every process of this deployment; created when missing (default: <db>.tls-ticket-keys)',
  )
  .addOption(
    new Option('--tls-ticket-key-rotation <duration>', 'how long each TLS session-ticket key seals new tickets')
      .argParser(duration)
      .default(parseDuration('1d'), '1d'),
  )
  .option('--trust-proxy <addresses>', `TLS-terminating proxies whose X-Forwarded-For is believed: ${TRUST_PROXY_HINT}`)
  .option('--heartbeat-interval <seconds>', 'heartbeat interval sent to agents', integerIn(1, MAX_INTERVAL_SECONDS), 300)
  .option('--posture-interval <seconds>', 'posture collection interval sent to agents', integerIn(1, MAX_INTERVAL_SECONDS), 3600)
  .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info'))
  .option(
    '--max-connections <n>',
    'open connections in all; at most the open-file limit less a reserve, which is the default',
    integerIn(1, MAX_COUNT),
  )
  .option('--max-connections-per-address <n>', 'open connections from one client address; 0: no cap', integerIn(0, MAX_COUNT), 128)
  .option(
    '--rate-limit-heartbeats <n>',
    'heartbeats per device per minute; 0: no limit (default: 4 times the schedule, at least 10)',
    integerIn(0, MAX_COUNT),
  )
  .option(
    '--rate-limit-postures <n>',
    'posture uploads per device per minute; 0: no limit (default: 4 times the schedule, at least 60)',
    integerIn(0, MAX_COUNT),
  )
  .option('--rate-limit-posture-mib <n>', 'MiB of posture uploads per device per minute; 0: no limit', integerIn(0, MAX_COUNT), 16)
  .option(
    '--rate-limit-sign-ins <n>',
    'console sign-in attempts per client address per minute, across every process on the database; 0: no limit',
    integerIn(0, MAX_COUNT),
    10,
  )
  .option(
    '--rate-limit-registrations <n>',
    'registrations with an enrollment secret per client address per minute; 0: no limit',
    integerIn(0, MAX_COUNT),
    DEFAULT_REGISTRATIONS_PER_ADDRESS,
  )
  .option(
    '--rate-limit-registrations-per-secret <n>',
    'registrations per enrollment secret per minute; 0: no limit',
    integerIn(0, MAX_COUNT),
    DEFAULT_REGISTRATIONS_PER_SECRET,
  )
  .option(
    '--rate-limit-device-pages <n>',
    'device page links (POST /device-page) per device per minute; 0: no limit',
    integerIn(0, MAX_COUNT),
    DEFAULT_DEVICE_PAGES_PER_DEVICE,
  )
  .addOption(
    new Option('--retention <duration>', 'delete posture results received longer ago than this')
      .argParser(duration)
      .default(parseDuration('90d'), '90d'),
  )
  .option('--retention-results <n>', 'keep at most this many posture results per device (the newest)', integerIn(1, MAX_COUNT), 20_000)
  .addOption(
    new Option('--retention-interval <duration>', 'time between two retention sweeps')
      .argParser(duration)
      .default(parseDuration('10m'), '10m'),
  )
  .option(
    '--max-check-keys <n>',
    `distinct check keys per device: the ${MIN_MAX_CHECK_KEYS} official ones (always accepted) and n - ${MIN_MAX_CHECK_KEYS} others; a new key beyond them is refused with 400`,
    integerIn(MIN_MAX_CHECK_KEYS, 10_000),
    DEFAULT_MAX_CHECK_KEYS,
  )
  .option(
    '--device-cache <n>',
    'devices whose authentication and last heartbeat are kept in memory (0: none; about 1 KiB each)',
    integerIn(0, MAX_COUNT),
    DEFAULT_DEVICE_CACHE,
  )
  .option('--db-pool-size <n>', 'PostgreSQL: most connections this process opens', integerIn(1, 1_000), 10)
  .addOption(
    new Option('--db-statement-timeout <duration>', 'PostgreSQL: longest statement; a request that meets it answers 503')
      .argParser(duration)
      .default(parseDuration('10s'), '10s'),
  )
  .addOption(
    new Option('--db-acquire-timeout <duration>', 'PostgreSQL: longest wait for a pooled connection; a request that meets it answers 503')
      .argParser(duration)
      .default(parseDuration('5s'), '5s'),
  )
  .option('--workers <n>', 'server processes sharing the port on this machine (node:cluster)', integerIn(1, 256), 1)
  .option('--no-policy', "serve no policy to agents (no policy_version in heartbeats, no policy route): the spec's API only")
  .addOption(
    new Option(
      '--webhook-interval <duration>',
      'time between two webhook sweeps (grace ends, stale devices, deliveries due); the first retry waits as long',
    )
      .argParser(duration)
      .default(parseDuration('10s'), '10s'),
  )
  .action(async (opts: ServeOptions, command: Command) => {
    const { location, options } = database(command);
    const db = { location, options: { ...options, timeouts: { statementMs: opts.dbStatementTimeout, acquireMs: opts.dbAcquireTimeout } } };
    if (opts.workers > 1 && cluster.isPrimary) {
      const { superviseWorkers } = await import('../server/workers');
      const { createLogger } = await import('../server/logger');
      const logger = createLogger({ level: opts.logLevel, pretty: process.stdout.isTTY === true });
      process.exitCode = await superviseWorkers(opts.workers, logger);
      return;
    }
    // Loaded only here: the admin commands start faster without fastify and pino.
    const { serve } = await import('../server/serve');
    const { defaultRequestsPerMinute } = await import('../server/limitDefaults');
    process.exitCode = await serve({
      db,
      host: opts.host,
      port: opts.port,
      publicUrl: opts.publicUrl,
      tlsCert: opts.tlsCert,
      tlsKey: opts.tlsKey,
      tlsTicketKeys: opts.tlsTicketKeys,
      tlsTicketKeyRotationMs: opts.tlsTicketKeyRotation,
      trustProxy: opts.trustProxy,
      heartbeatIntervalSeconds: opts.heartbeatInterval,
      postureIntervalSeconds: opts.postureInterval,
      logLevel: opts.logLevel,
      connections: { total: opts.maxConnections, perAddress: opts.maxConnectionsPerAddress },
      rateLimits: {
        heartbeats: opts.rateLimitHeartbeats ?? defaultRequestsPerMinute(opts.heartbeatInterval, 10),
        postures: opts.rateLimitPostures ?? defaultRequestsPerMinute(opts.postureInterval, 60),
        postureBytes: opts.rateLimitPostureMib * MIB,
        signIns: opts.rateLimitSignIns,
        registrations: opts.rateLimitRegistrations,
        registrationsPerSecret: opts.rateLimitRegistrationsPerSecret,
        devicePages: opts.rateLimitDevicePages,
      },
      retention: { maxAgeMs: opts.retention, maxResultsPerDevice: opts.retentionResults, sweepIntervalMs: opts.retentionInterval },
      maxCheckKeys: opts.maxCheckKeys,
      deviceCacheSize: opts.deviceCache,
      invocation: invocation(),
      policy: opts.policy,
      webhookIntervalMs: opts.webhookInterval,
    });
    // A worker's channel to its primary would keep it alive after the stop.
    cluster.worker?.disconnect();
  });

const device = program.command('device').description('manage devices (safe while serve runs)');

device
  .command('create')
  .description('create a PENDING device and its single-use enrollment token')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization (created when it does not exist)')
  .option('--name <label>', 'label for the device')
  .addOption(
    new Option('--token-ttl <duration>', 'enrollment token validity: 30s, 15m, 12h, 7d…')
      .argParser(duration)
      .default(parseDuration('7d'), '7d'),
  )
  .option('--public-url <url>', 'server URL to print (default: the one the last `serve` announced)', origin)
  .option('--json', 'print {device_id, org, enrollment_token, server_url, enrollment_link} as JSON')
  .action(async (opts: CreateOptions, command: Command) => {
    const created = await withStore(command, false, async (store) => {
      const made = await createDevice(store, { org: opts.org, name: opts.name, tokenTtlMs: opts.tokenTtl, publicUrl: opts.publicUrl });
      await auditCli(store, {
        action: 'device.create',
        org: made.org,
        target: { type: 'device', id: made.device_id },
        detail: { token_expires_at: made.token_expires_at },
      });
      return made;
    });
    if (opts.json) printJson(created);
    else print(formatCreated(created));
  });

device
  .command('list')
  .description('list devices')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--org <name>', 'only devices of this organization')
  .option('--state <state>', 'only devices in this state: PENDING, ACTIVE or REVOKED')
  .option('--platform <platform>', 'only devices of this platform: DARWIN, LINUX, FREEBSD, WINDOWS, or UNKNOWN (no heartbeat yet)')
  .option('--failing <check>', 'only devices failing this check (or "any"): FAIL past its grace period, not excepted')
  .option('--hostname <text>', 'only devices whose hostname contains this')
  .option('--check <check>', 'with --status: only devices whose latest result of this check has that status')
  .option(
    '--status <status>',
    'PASS, FAIL (past its grace period), IN_GRACE (a FAIL within it), UNKNOWN, NOT_APPLICABLE, or MISSING (no result)',
  )
  .option('--agent-version <version>', 'only devices running this agent version')
  .option('--label <key=value>', 'only devices carrying this label')
  .option('--min-failing <n>', 'only devices failing at least this many checks (past their grace, not excepted)')
  .option('--sort <key>', 'created_at (default), hostname, last_seen_at, failing_checks or agent_version (in version order)')
  .option('--order <order>', 'asc (default) or desc')
  .option('--json', 'print a JSON array')
  .action(async (opts: DeviceListOptions, command: Command) => {
    const { org, state, platform, failing, hostname, check, status, label, sort, order } = opts;
    const request = { org, state, platform, failing, hostname, check, status, label, sort, order };
    const devices = await withStore(command, true, (store) =>
      listAllDevices(store, ALL_ORGANIZATIONS, { ...request, agent_version: opts.agentVersion, min_failing: opts.minFailing }),
    );
    if (opts.json) printJson(devices);
    else print(formatDeviceList(devices));
  });

device
  .command('show')
  .description('show a device and its stored posture results')
  .argument('<device_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print the device record and its postures as JSON')
  .action(async (deviceId: string, opts: ShowOptions, command: Command) => {
    const details = await withStore(command, true, (store) => showDevice(store, deviceId));
    if (opts.json) printJson(details);
    else print(formatDevice(details));
  });

device
  .command('failing')
  .description('which active devices fail which check (latest results), and how to fix each for the fleet')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--org <name>', 'only devices of this organization')
  .option('--json', 'print a JSON array')
  .action(async (opts: ListOptions, command: Command) => {
    const failures = await withStore(command, true, (store) => fleetFailures(store, opts.org));
    if (opts.json) printJson(failures);
    else print(formatFleetFailures(failures));
  });

device
  .command('revoke')
  .description('revoke a device: its API key and unused enrollment token stop working')
  .argument('<device_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .action(async (deviceId: string, _opts: unknown, command: Command) => {
    const outcome = await withStore(command, true, async (store) => {
      const revoked = await revokeDevice(store, deviceId);
      await auditCli(store, { action: 'device.revoke', target: { type: 'device', id: deviceId }, detail: { outcome: revoked } });
      return revoked;
    });
    print(outcome === 'revoked' ? `Revoked device ${deviceId}.\n` : `Device ${deviceId} was already revoked.\n`);
  });

device
  .command('label')
  .description("set or remove a device's labels (label refinements of the policy and label exceptions target them); shows them")
  .argument('<device_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--set <key=value>', 'set a label (repeat for more): the rules of an enrollment secret’s labels', collectLabel)
  .option('--remove <key>', 'remove a label the device has (repeat for more)', (key: string, keys: string[] = []) => [...keys, key])
  .option('--json', 'print {device_id, org, labels, previous, policy_version} as JSON')
  .action(async (deviceId: string, opts: { set?: [string, string][]; remove?: string[]; json?: true }, command: Command) => {
    const edit = { set: Object.fromEntries(opts.set ?? []), remove: opts.remove ?? [] };
    if (new Set((opts.set ?? []).map(([key]) => key)).size !== (opts.set ?? []).length)
      throw new UsageError('each label key may be set once');
    const view = await withStore(command, true, async (store) => {
      const changed = await changeDeviceLabels(store, ALL_ORGANIZATIONS, deviceId, edit);
      const event = labelsAuditEvent(changed);
      if (event) await auditCli(store, event);
      return changed;
    });
    if (opts.json) printJson(view);
    else print(`Labels of ${view.device_id}: ${labelsText(view.labels) || '(none)'} (policy version ${view.policy_version}).\n`);
  });

const secret = program.command('secret').description('enrollment secrets for managed installs (safe while serve runs)');

/** Repeated `--label k=v`, collected. */
function collectLabel(text: string, previous: [string, string][] = []): [string, string][] {
  try {
    return [...previous, parseLabel(text)];
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

secret
  .command('create')
  .description('create a reusable enrollment secret (shown once; only its hash is stored)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization of the devices it registers (created when it does not exist)')
  .addOption(new Option('--expires <duration>', 'it stops working after this: 30s, 15m, 12h, 30d… (default: never)').argParser(duration))
  .option('--max-uses <n>', 'it registers at most this many devices (default: no cap)', integerIn(1, MAX_COUNT))
  .option('--label <key=value>', 'a label every device it registers gets (repeatable)', collectLabel)
  .option('--note <text>', 'what it is for (shown in lists)')
  .option('--json', 'print {secret_id, enroll_secret, expires_at, max_uses} as JSON')
  .action(
    async (
      opts: { org: string; expires?: number; maxUses?: number; label?: [string, string][]; note?: string; json?: true },
      command: Command,
    ) => {
      if (opts.label !== undefined && new Set(opts.label.map(([key]) => key)).size !== opts.label.length)
        throw new UsageError('each --label key may be given once');
      const { created, serverUrl } = await withStore(command, false, async (store) => {
        const made = await createSecret(
          store,
          {
            org: opts.org,
            expiresInMs: opts.expires,
            maxUses: opts.maxUses,
            labels: Object.fromEntries(opts.label ?? []),
            note: opts.note,
          },
          new Date(),
          ALL_ORGANIZATIONS,
        );
        await auditCli(store, {
          action: 'enroll_secret.create',
          org: opts.org,
          target: { type: 'enroll_secret', id: made.secret_id },
          detail: { expires_at: made.expires_at, max_uses: made.max_uses },
        });
        return { created: made, serverUrl: (await store.getSetting(PUBLIC_URL_SETTING)) ?? DEFAULT_PUBLIC_URL };
      });
      if (opts.json) printJson(created);
      else print(formatCreatedSecret(created, opts.org.trim(), serverUrl));
    },
  );

secret
  .command('list')
  .description('list enrollment secrets with their use counts (never the secrets themselves)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--org <name>', 'only secrets of this organization')
  .option('--json', 'print a JSON array')
  .action(async (opts: ListOptions, command: Command) => {
    const secrets = await withStore(command, true, (store) => listSecrets(store, ALL_ORGANIZATIONS, opts.org));
    if (opts.json) printJson(secrets);
    else print(formatSecretList(secrets));
  });

secret
  .command('revoke')
  .description('revoke an enrollment secret: it registers no device from now on (devices it registered stay)')
  .argument('<secret_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .action(async (secretId: string, _opts: unknown, command: Command) => {
    const outcome = await withStore(command, true, async (store) => {
      const revoked = await revokeSecret(store, secretId, new Date(), ALL_ORGANIZATIONS);
      await auditCli(store, {
        action: 'enroll_secret.revoke',
        target: { type: 'enroll_secret', id: secretId },
        detail: { outcome: revoked },
      });
      return revoked;
    });
    print(outcome === 'revoked' ? `Revoked enrollment secret ${secretId}.\n` : `Enrollment secret ${secretId} was already revoked.\n`);
  });

program
  .command('migrate-data')
  .description('copy a SQLite deployment into a PostgreSQL database, then compare the row counts (run it again to resume)')
  .requiredOption('--from <file>', 'the SQLite database file (stop the server that uses it first)')
  .requiredOption('--to <url>', 'the PostgreSQL database: postgres://user@host:5432/database')
  .addOption(dbPasswordFileOption())
  .action(async (opts: { from: string; to: string; dbPasswordFile?: string }) => {
    const target = parseDatabaseLocation(opts.to);
    if (target.engine !== 'postgres') throw new UsageError('--to must be a postgres:// URL');
    const { copyToPostgres } = await import('../server/db/migrateData');
    const counts = await copyToPostgres(opts.from, { url: target.url, display: target.display, passwordFile: opts.dbPasswordFile });
    print(formatCounts(counts));
    if (counts.some((count) => count.source !== count.target)) {
      process.stderr.write(
        'device-agent-server: the row counts differ (was a server still writing to either database?); run the command again to resume\n',
      );
      process.exitCode = EXIT_UNEXPECTED;
      return;
    }
    print(`Copied ${opts.from} into ${target.display}.\n`);
  });

program
  .command('backup')
  .description('copy a SQLite database into a new file while serve runs (PostgreSQL: pg_dump, docs/server.md)')
  .addOption(dbOption())
  .requiredOption('--to <file>', 'the new backup file (never overwritten)')
  .action(async (opts: { to: string }, command: Command) => {
    const { location } = database(command);
    if (location.engine !== 'sqlite')
      throw new UsageError(`back up ${location.display} with pg_dump (docs/server.md, "Backup and restore")`);
    const { backupSqlite } = await import('../server/backup');
    const { pages } = await backupSqlite(location.path, opts.to);
    print(`Backed up ${location.path} into ${opts.to} (${pages} pages).\n`);
  });

const admin = program.command('admin').description('console accounts (safe while serve runs)');

admin
  .command('add')
  .description('add a console account; the password is read from the terminal (or standard input), never from the command line')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--email <email>', "the account's sign-in email")
  .option('--org <name>', 'the organization it may see and change (created when missing)')
  .option('--all-orgs', 'it may see and change every organization')
  .action(async (opts: ScopeOptions & { email: string }, command: Command) => {
    const password = await readSecretLine('Password for the new account: ');
    const added = await withStore(command, false, async (store) => {
      const account = await addAdminAccount(store, { email: opts.email, password, org: opts.org, allOrgs: opts.allOrgs === true });
      await auditCli(store, { action: 'admin_account.add', org: account.org, target: { type: 'admin_account', id: account.email } });
      return account;
    });
    print(`Added admin account ${added.email} (${added.org === null ? 'all organizations' : `organization "${added.org}"`}).\n`);
  });

admin
  .command('passwd')
  .description("set an account's password (read like `admin add`) and end its sessions")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--email <email>', 'the account')
  .action(async (opts: { email: string }, command: Command) => {
    const password = await readSecretLine('New password: ');
    await withStore(command, true, async (store) => {
      await setAdminPassword(store, opts.email, password);
      await auditCli(store, { action: 'admin_account.passwd', target: { type: 'admin_account', id: opts.email.trim().toLowerCase() } });
    });
    print(`Changed the password of ${opts.email.trim().toLowerCase()}; its sessions ended.\n`);
  });

admin
  .command('remove')
  .description('remove a console account and end its sessions')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--email <email>', 'the account')
  .action(async (opts: { email: string }, command: Command) => {
    await withStore(command, true, async (store) => {
      await removeAdminAccount(store, opts.email);
      await auditCli(store, { action: 'admin_account.remove', target: { type: 'admin_account', id: opts.email.trim().toLowerCase() } });
    });
    print(`Removed admin account ${opts.email.trim().toLowerCase()}.\n`);
  });

admin
  .command('list')
  .description('list console accounts')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print a JSON array')
  .action(async (opts: { json?: true }, command: Command) => {
    const accounts = await withStore(command, true, listAdminAccounts);
    if (opts.json) printJson(accounts);
    else
      print(
        accounts.map((a) => `${displayText(a.email)}  ${displayText(a.org ?? '(all organizations)')}  added ${a.created_at}\n`).join('') ||
          'No admin accounts.\n',
      );
  });

const token = program.command('token').description('admin API tokens (safe while serve runs)');

token
  .command('create')
  .description('create an admin API token (shown once; only its hash is stored)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--label <label>', 'what the token is for')
  .option('--org <name>', 'the organization it may see and change (created when missing)')
  .option('--all-orgs', 'it may see and change every organization')
  .option('--json', 'print {token_id, admin_token, org, label} as JSON')
  .action(async (opts: ScopeOptions & { label: string; json?: true }, command: Command) => {
    const created = await withStore(command, false, async (store) => {
      const made = await createAdminToken(store, { label: opts.label, org: opts.org, allOrgs: opts.allOrgs === true });
      await auditCli(store, { action: 'admin_token.create', org: made.org, target: { type: 'admin_token', id: made.token_id } });
      return made;
    });
    if (opts.json) printJson(created);
    else
      print(
        [
          `Created admin token ${created.token_id} (${created.org === null ? 'all organizations' : `organization "${created.org}"`}).`,
          `  ${created.admin_token}`,
          'Send it as "Authorization: Bearer <token>" to /api/admin/v1. It is a secret and is not shown again.',
          '',
        ].join('\n'),
      );
  });

token
  .command('list')
  .description('list admin API tokens (never the tokens themselves)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print a JSON array')
  .action(async (opts: { json?: true }, command: Command) => {
    const tokens = await withStore(command, true, listAdminTokens);
    if (opts.json) printJson(tokens);
    else
      print(
        tokens
          .map(
            (t) =>
              `${t.token_id}  ${displayText(t.org ?? '(all organizations)')}  ${displayText(t.label)}${t.revoked_at === null ? '' : `  revoked ${t.revoked_at}`}\n`,
          )
          .join('') || 'No admin tokens.\n',
      );
  });

token
  .command('revoke')
  .description('revoke an admin API token')
  .argument('<token_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .action(async (tokenId: string, _opts: unknown, command: Command) => {
    await withStore(command, true, async (store) => {
      await revokeAdminToken(store, tokenId);
      await auditCli(store, { action: 'admin_token.revoke', target: { type: 'admin_token', id: tokenId } });
    });
    print(`Revoked admin token ${tokenId}.\n`);
  });

/** Who made a change from the CLI, for the policy's history: the operating-system account. */
function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** Records an action of the admin CLI in the audit log (audit.ts): who is `cli:<user>`, from no address. */
function auditCli(store: Store, event: AuditEvent): Promise<void> {
  return recordAudit(store, { actor: cliActor(), address: null }, event);
}

/** A JSON file (or "-": standard input) for `policy set` and `lifecycle import`; unreadable or malformed: exit 2. */
function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
}

interface PolicyOptions {
  org: string;
  label?: string;
  json?: true;
}

const policy = program.command('policy').description("the posture policy served to an organization's agents (safe while serve runs)");

policy
  .command('show')
  .description("show an organization's policy (or a label's refinement) and every setting it results in")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .option('--label <key=value>', "a device label's refinement")
  .option('--json', 'print {org, version, label, document, effective, labels} as JSON')
  .action(async (opts: PolicyOptions, command: Command) => {
    const view = await withStore(command, true, (store) => showPolicy(store, ALL_ORGANIZATIONS, opts));
    if (opts.json) printJson(view);
    else print(formatPolicy(view));
  });

policy
  .command('set')
  .description("replace an organization's policy (or a label's refinement) with a JSON file; --reset removes it")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization (created when it does not exist)')
  .option('--label <key=value>', "a device label's refinement")
  .option('--file <policy.json>', 'the policy (JSON; - reads standard input): only the settings that differ from the defaults')
  .option('--reset', "remove the document: the organization's defaults, or no refinement for the label")
  .option('--json', 'print {org, label, version} as JSON')
  .action(async (opts: PolicyOptions & { file?: string; reset?: true }, command: Command) => {
    if ((opts.file === undefined) === (opts.reset === undefined)) throw new UsageError('give either --file <policy.json> or --reset');
    const document = opts.file === undefined ? null : readJsonFile(opts.file);
    const set = await withStore(command, false, async (store) => {
      const changed = await setPolicy(store, ALL_ORGANIZATIONS, { org: opts.org, label: opts.label, document, actor: cliActor() });
      await auditCli(store, { action: 'policy.set', org: changed.org, detail: { label: changed.label, version: changed.version } });
      return changed;
    });
    if (opts.json) printJson(set);
    else print(`Policy of ${set.org}${set.label === null ? '' : ` for ${set.label}`} is now version ${set.version}.\n`);
  });

policy
  .command('history')
  .description("an organization's policy changes, newest first: version, who, when, which settings")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .option('--label <key=value>', "only this label's refinement")
  .option('--limit <n>', 'at most this many changes', integerIn(1, 1000), 50)
  .option('--json', 'print a JSON array')
  .action(async (opts: PolicyOptions & { limit: number }, command: Command) => {
    const changes = await withStore(command, true, (store) => policyHistory(store, ALL_ORGANIZATIONS, opts));
    if (opts.json) printJson(changes);
    else print(formatPolicyHistory(changes));
  });

const exception = program
  .command('exception')
  .description("accept one check's FAIL on a device until a date: shown as excepted, counted apart (safe while serve runs)");

exception
  .command('add')
  .description('grant an exception: the agent still reports the true status; it lapses by itself')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .option('--device <device_id>', 'the device')
  .option('--label <key=value>', 'every device with this label')
  .requiredOption('--check <key>', 'the check, e.g. DISK_ENCRYPTION')
  .requiredOption('--reason <text>', 'why (shown with the exception)')
  .requiredOption('--expires <when>', 'an ISO 8601 date or time, or a duration such as 30d (at most a year)')
  .option('--json', 'print the exception as JSON')
  .action(
    async (
      opts: { org: string; device?: string; label?: string; check: string; reason: string; expires: string; json?: true },
      command: Command,
    ) => {
      const granted = await withStore(command, true, async (store) => {
        const made = await grantException(store, ALL_ORGANIZATIONS, { ...opts, actor: cliActor() });
        await auditCli(store, {
          action: 'exception.grant',
          org: made.org,
          target: { type: 'exception', id: made.exception_id },
          detail: { check_key: made.check_key, device_id: made.device_id, label: made.label, expires_at: made.expires_at },
        });
        return made;
      });
      if (opts.json) printJson(granted);
      else print(`Exception ${granted.exception_id}: ${granted.check_key} excepted until ${granted.expires_at}.\n`);
    },
  );

exception
  .command('list')
  .description("an organization's exceptions that have not lapsed, soonest to end first")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .option('--json', 'print a JSON array')
  .action(async (opts: { org: string; json?: true }, command: Command) => {
    const exceptions = await withStore(command, true, (store) => listExceptions(store, ALL_ORGANIZATIONS, opts));
    if (opts.json) printJson(exceptions);
    else print(formatExceptions(exceptions));
  });

exception
  .command('remove')
  .description('end an exception now')
  .argument('<exception_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .action(async (id: string, opts: { org: string }, command: Command) => {
    await withStore(command, true, async (store) => {
      await removeException(store, ALL_ORGANIZATIONS, { org: opts.org, id });
      await auditCli(store, { action: 'exception.revoke', org: opts.org, target: { type: 'exception', id } });
    });
    print(`Removed exception ${id}.\n`);
  });

const lifecycle = program
  .command('lifecycle')
  .description('the OS lifecycle data set served to agents with the policy (safe while serve runs)');

lifecycle
  .command('import')
  .description('serve a newer lifecycle data set: JSON keyed by platform, each as checks/<os>/lifecycle.ts (validated, versioned)')
  .argument('<file>', 'the data set (JSON; - reads standard input)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print the new version as JSON')
  .action(async (file: string, opts: { json?: true }, command: Command) => {
    const json = readJsonFile(file);
    const view = await withStore(command, false, async (store) => {
      const imported = await importLifecycle(store, json, cliActor());
      await auditCli(store, { action: 'lifecycle.import', detail: { version: imported.version } });
      return imported;
    });
    if (opts.json) printJson(view);
    else print(formatLifecycle(view));
  });

lifecycle
  .command('show')
  .description("which lifecycle data set agents are served: its version and each platform's data date")
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print as JSON')
  .action(async (opts: { json?: true }, command: Command) => {
    const view = await withStore(command, true, lifecycleVersion);
    if (opts.json) printJson(view);
    else print(formatLifecycle(view));
  });

const org = program.command('org').description("an organization's settings (safe while serve runs)");

org
  .command('contact')
  .description("how the organization's device users reach their admin, shown on the device page (my-device)")
  .requiredOption('--org <name>', 'organization')
  .option('--set <text>', 'set the contact: an address, a URL, a phone number (one line)')
  .option('--clear', 'remove the contact')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--json', 'print {org, contact} as JSON')
  .action(async (opts: { org: string; set?: string; clear?: boolean; json?: boolean }, command: Command) => {
    if (opts.set !== undefined && opts.clear) throw new UsageError('give --set <text> or --clear, not both');
    const result = await withStore(command, true, async (store) => {
      if (opts.set === undefined && !opts.clear) return organizationContact(store, ALL_ORGANIZATIONS, opts.org);
      const set = await setOrganizationContact(store, ALL_ORGANIZATIONS, opts.org, opts.set ?? null, new Date());
      await auditCli(store, { action: 'org.contact', org: set.org, detail: { cleared: set.contact === null } });
      return set;
    });
    if (opts.json) printJson(result);
    else print(`${displayText(result.org)}: ${result.contact === null ? '(no contact set)' : displayText(result.contact)}\n`);
  });

const webhook = program
  .command('webhook')
  .description("an organization's outgoing webhooks: failing checks, recoveries, stale and re-enrolled devices (safe while serve runs)");

/** Repeated `--event <type>`, collected. */
function collectEvent(text: string, previous: string[] = []): string[] {
  return [...previous, text];
}

webhook
  .command('create')
  .description('add a webhook; its signing secret is shown once')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .requiredOption('--org <name>', 'organization')
  .requiredOption('--url <url>', 'where events are POSTed (http or https)')
  .addOption(new Option('--format <format>', 'generic JSON, or a Slack incoming webhook').choices(['json', 'slack']).default('json'))
  .option('--event <type>', `an event to send (repeatable; default: all of ${WEBHOOK_EVENTS.join(', ')})`, collectEvent)
  .option('--include-evidence', "send the failing check's evidence in check events (JSON format)")
  .option('--json', 'print the webhook, with its secret, as JSON')
  .action(
    async (opts: { org: string; url: string; format: string; event?: string[]; includeEvidence?: true; json?: true }, command: Command) => {
      const created = await withStore(command, true, async (store) => {
        const made = await createWebhook(store, ALL_ORGANIZATIONS, {
          org: opts.org,
          url: opts.url,
          format: opts.format,
          events: opts.event,
          includeEvidence: opts.includeEvidence === true,
          actor: cliActor(),
        });
        await auditCli(store, {
          action: 'webhook.create',
          org: made.org,
          target: { type: 'webhook', id: made.webhook_id },
          detail: { url: made.url, format: made.format, events: made.events.join(','), include_evidence: made.include_evidence },
        });
        return made;
      });
      if (opts.json) printJson(created);
      else
        print(
          [
            `Created webhook ${created.webhook_id} (${created.format}: ${created.events.join(', ')}).`,
            `  signing secret: ${created.secret}`,
            'Verify X-Device-Agent-Signature with it (docs/server.md, "Webhooks"). It is not shown again.',
            '',
          ].join('\n'),
        );
    },
  );

webhook
  .command('list')
  .description('list webhooks (never their secrets)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--org <name>', 'only this organization')
  .option('--json', 'print a JSON array')
  .action(async (opts: ListOptions, command: Command) => {
    const hooks = await withStore(command, true, (store) => listWebhooks(store, ALL_ORGANIZATIONS, opts.org));
    if (opts.json) printJson(hooks);
    else
      print(
        hooks
          .map(
            (w) =>
              `${w.webhook_id}  ${displayText(w.org)}  ${w.format}  ${displayText(w.url)}  ${w.events.join(',')}${w.include_evidence ? '  +evidence' : ''}\n`,
          )
          .join('') || 'No webhooks.\n',
      );
  });

webhook
  .command('delete')
  .description('delete a webhook and its delivery log')
  .argument('<webhook_id>')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .action(async (id: string, _opts: unknown, command: Command) => {
    await withStore(command, true, async (store) => {
      const { org } = await deleteWebhook(store, ALL_ORGANIZATIONS, id);
      await auditCli(store, { action: 'webhook.delete', org, target: { type: 'webhook', id } });
    });
    print(`Deleted webhook ${id}.\n`);
  });

webhook
  .command('deliveries')
  .description('the delivery log, newest first: each event, its attempts and the last answer')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--webhook <webhook_id>', 'only this webhook')
  .option('--json', 'print a JSON array')
  .action(async (opts: { webhook?: string; json?: true }, command: Command) => {
    const log = await withStore(command, true, (store) => deliveryLog(store, ALL_ORGANIZATIONS, opts.webhook));
    if (opts.json) printJson(log);
    else
      print(
        log
          .map(
            (d) =>
              `${d.created_at}  ${d.event_type}  ${d.device_id ?? '-'}  ${d.state}  attempts ${d.attempts}  ${d.last_status ?? '-'}${d.last_error === null ? '' : `  ${displayText(d.last_error)}`}\n`,
          )
          .join('') || 'No deliveries.\n',
      );
  });

program
  .command('audit')
  .description('the audit log: admin actions newest first, with who, when, what and from where (safe while serve runs)')
  .addOption(dbOption())
  .addOption(dbPasswordFileOption())
  .option('--org <name>', "only this organization's entries")
  .option('--action <action>', 'only this action, e.g. device.revoke or sign_in_refused')
  .option('--limit <n>', 'at most this many entries', integerIn(1, 500), 100)
  .option('--json', 'print {entries, next_before} as JSON')
  .action(async (opts: { org?: string; action?: string; limit: number; json?: true }, command: Command) => {
    const page = await withStore(command, true, (store) =>
      listAudit(store, ALL_ORGANIZATIONS, { org: opts.org, action: opts.action, limit: opts.limit }),
    );
    if (opts.json) printJson(page);
    else print(formatAudit(page.entries));
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // Commander already printed the message (or the help/version).
    process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
  }
  const usage = error instanceof UsageError || error instanceof DatabaseOpenError;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`device-agent-server: ${usage ? '' : 'unexpected error: '}${displayText(message)}\n`);
  process.exit(usage ? EXIT_USAGE : EXIT_UNEXPECTED);
});
