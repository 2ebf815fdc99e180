// `device-agent doctor`: every link of the chain from the state directory to an answered heartbeat,
// each with a verdict and the next step. It changes nothing locally (no wipe after a 401, no repair)
// and nothing on the server beyond one heartbeat. No line ever holds a key, token or proxy password.
import { lookup } from 'node:dns/promises';
import { existsSync, readFileSync } from 'node:fs';
import { isIP, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, rootCertificates, type DetailedPeerCertificate } from 'node:tls';
import { CredentialsRejectedError, type ApiError } from './api';
import { createApiClient } from './client';
import { heartbeatBody } from './daemonIdentity';
import { KeyStoreUnavailableError, firstLine } from './errors';
import { CLOCK_SKEW_WARNING_MS, clockSkewMs } from './scheduler';
import { isLoopbackHost } from './serverUrl';
import { openAgentState, type AgentState, type EnrollmentRecord } from './state';
import { enrolledWithText } from './status';
import { readDeviceIdentity } from '../identity';
import { describePolicySource } from './policySource';
import { serviceProbe, type ServiceState } from '../platform/serviceProbe';

export type Verdict = 'pass' | 'warn' | 'fail' | 'skip' | 'unknown';

export interface DoctorCheck {
  id: string;
  verdict: Verdict;
  /** What was found. */
  detail: string;
  /** What to do next; absent when nothing needs doing. */
  next?: string;
}

export interface DoctorOptions {
  stateDir: string;
  caFile?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Days before a server certificate's expiry from which doctor warns. */
const CERT_EXPIRY_WARNING_DAYS = 14;

export async function runDoctor(options: DoctorOptions): Promise<DoctorCheck[]> {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const checks: DoctorCheck[] = [];
  const add = (check: DoctorCheck) => checks.push(check);
  const skipRest = (ids: string[], why: string) => ids.forEach((id) => add({ id, verdict: 'skip', detail: why }));
  // Read only, and not refused when untrusted: that is a finding here.
  const state = await openAgentState(options.stateDir, { readOnly: true, verify: false });
  const network = ['server_url', 'proxy', 'dns', 'tcp', 'tls', 'heartbeat', 'clock'];

  try {
    await state.verify();
    add({
      id: 'state_dir',
      verdict: 'pass',
      detail: existsSync(state.dir)
        ? `${state.dir}: owned by this user, not writable by group or others`
        : `${state.dir} does not exist yet (enroll creates it owner-only)`,
    });
  } catch (err) {
    add({
      id: 'state_dir',
      verdict: 'fail',
      detail: firstLine(err),
      next: 'fix the ownership and modes as the message says, or use another --state-dir',
    });
    skipRest(['enrollment', 'key_store', ...network], 'the state directory is not trusted');
    await addLocalChecks(add, state);
    return checks;
  }

  let record: EnrollmentRecord | null = null;
  let unreadable: string | undefined;
  try {
    record = await state.enrollment();
  } catch (err) {
    unreadable = firstLine(err);
  }
  if (record?.state !== 'enrolled') {
    add(
      unreadable !== undefined
        ? { id: 'enrollment', verdict: 'fail', detail: unreadable, next: 'run `device-agent unenroll`, then enroll again' }
        : {
            id: 'enrollment',
            verdict: 'fail',
            detail: record
              ? `an ${record.state === 'enrolling' ? 'enrollment' : 'unenrollment'} was cut short`
              : `not enrolled (state directory ${state.dir})`,
            next: record
              ? 'run `device-agent unenroll` to finish it, then enroll'
              : 'enroll: device-agent enroll --link-file - (or --server <url> --token-file <file>)',
          },
    );
    skipRest(['key_store', ...network], 'not enrolled');
    await addLocalChecks(add, state);
    return checks;
  }
  add({
    id: 'enrollment',
    verdict: 'pass',
    detail: `enrolled with ${record.server_url}${record.enrolled_at ? ` since ${record.enrolled_at}` : ''}, using ${enrolledWithText(record.enrolled_with)}`,
  });

  let apiKey: string | null = null;
  try {
    apiKey = await state.apiKey(record);
    add({
      id: 'key_store',
      verdict: 'pass',
      detail: `the ${record.keystore === 'keyring' ? 'OS secret store' : 'key file'} holds this enrollment's API key`,
    });
  } catch (err) {
    if (!(err instanceof KeyStoreUnavailableError)) throw err;
    add({
      id: 'key_store',
      verdict: 'fail',
      detail: err.message,
      next: 'unlock the secret store, or run `device-agent unenroll` and enroll again',
    });
  }

  // The record was re-validated when read (enrollmentRecord.ts): this is the URL the agent uses.
  const url = new URL(record.server_url);
  add({
    id: 'server_url',
    verdict: 'pass',
    detail: `${record.server_url} (${url.protocol === 'https:' ? 'https' : 'plain http on loopback'})`,
  });

  const caFile = options.caFile ?? record.ca_file;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const proxy = proxyFor(url, env);
  add(
    proxy
      ? { id: 'proxy', verdict: 'pass', detail: `requests go through the proxy ${proxy.shown}` }
      : {
          id: 'proxy',
          verdict: 'pass',
          detail: isLoopbackHost(url.hostname) ? 'none: loopback is never proxied' : 'none: direct connection',
        },
  );

  if (isIP(host) !== 0) {
    add({ id: 'dns', verdict: 'skip', detail: `${host} is an IP address` });
  } else if (proxy) {
    add({ id: 'dns', verdict: 'skip', detail: 'the proxy resolves the server name' });
  } else {
    try {
      const addresses = await lookup(host, { all: true });
      add({ id: 'dns', verdict: 'pass', detail: `${host} resolves to ${addresses.map((a) => a.address).join(', ')}` });
    } catch (err) {
      add({
        id: 'dns',
        verdict: 'fail',
        detail: `${host} does not resolve: ${firstLine(err)}`,
        next: 'check the DNS settings, or the server name with IT',
      });
      skipRest(['tcp', 'tls', 'heartbeat', 'clock'], 'the server name does not resolve');
      await addLocalChecks(add, state);
      return checks;
    }
  }

  const target = proxy
    ? { host: proxy.host, port: proxy.port, what: `the proxy ${proxy.shown}` }
    : { host, port, what: `${host} port ${port}` };
  try {
    const ms = await tcpProbe(target.host, target.port, timeoutMs);
    add({ id: 'tcp', verdict: 'pass', detail: `connected to ${target.what} in ${ms} ms` });
  } catch (err) {
    add({
      id: 'tcp',
      verdict: 'fail',
      detail: `cannot connect to ${target.what}: ${firstLine(err)}`,
      next: 'check the network, a firewall, or that the server runs',
    });
    skipRest(['tls', 'heartbeat', 'clock'], 'no TCP connection');
    await addLocalChecks(add, state);
    return checks;
  }

  if (url.protocol !== 'https:') add({ id: 'tls', verdict: 'skip', detail: 'plain http on loopback' });
  else if (proxy) add({ id: 'tls', verdict: 'skip', detail: 'through a proxy: the heartbeat below checks TLS end to end' });
  else add(await tlsCheck(host, port, caFile, timeoutMs));

  if (apiKey === null) {
    skipRest(['heartbeat', 'clock'], 'no API key to send');
  } else {
    await heartbeatCheck(add, record.server_url, caFile, apiKey, timeoutMs);
  }
  await addLocalChecks(add, state);
  return checks;
}

async function heartbeatCheck(
  add: (c: DoctorCheck) => void,
  serverUrl: string,
  caFile: string | undefined,
  apiKey: string,
  timeoutMs: number,
) {
  let api;
  try {
    api = createApiClient({ serverUrl, caFile, timeouts: { connectMs: timeoutMs } });
  } catch (err) {
    add({ id: 'heartbeat', verdict: 'fail', detail: firstLine(err), next: 'fix --ca-file / DEVICE_AGENT_CA_FILE' });
    add({ id: 'clock', verdict: 'skip', detail: 'no heartbeat' });
    return;
  }
  try {
    const body = heartbeatBody(await readDeviceIdentity());
    const sentAt = Date.now();
    const answer = await api.heartbeat(apiKey, body, { timeoutMs });
    add({ id: 'heartbeat', verdict: 'pass', detail: `the server answered with this key (device ${answer.device_id})` });
    const skew = clockSkewMs(answer.server_time, sentAt, Date.now());
    if (skew === null) add({ id: 'clock', verdict: 'unknown', detail: 'the server sent no usable time' });
    else if (Math.abs(skew) > CLOCK_SKEW_WARNING_MS) {
      add({
        id: 'clock',
        verdict: 'warn',
        detail: `the local clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'behind' : 'ahead of'} the server`,
        next: 'turn on time synchronisation (NTP)',
      });
    } else add({ id: 'clock', verdict: 'pass', detail: `within ${Math.round(Math.abs(skew) / 1000)} s of the server` });
  } catch (err) {
    const rejected = err instanceof CredentialsRejectedError;
    add({
      id: 'heartbeat',
      verdict: 'fail',
      detail: firstLine(err),
      next: rejected
        ? 'the API key was revoked: run `device-agent unenroll`, then enroll with a new token'
        : (err as ApiError).kind === 'conflict'
          ? 'another device of the organisation has this hardware id: ask IT'
          : 'see the lines above; try again later',
    });
    add({ id: 'clock', verdict: 'skip', detail: 'no heartbeat' });
  } finally {
    await api.close();
  }
}

/** Service, daemon, queue and the daemon's last errors: local, and worth showing whatever failed above. */
async function addLocalChecks(add: (c: DoctorCheck) => void, state: AgentState): Promise<void> {
  add(serviceCheck(serviceProbe()));
  const [daemonPid, runtime, queued] = await Promise.all([
    state.daemonPid().catch(() => null),
    state.status.read(),
    state.queuedResults().catch(() => 0),
  ]);
  const stateDir = state.dir;
  add(
    daemonPid === null
      ? {
          id: 'daemon',
          verdict: 'warn',
          detail: `no \`device-agent run\` is using ${stateDir}`,
          next: 'start the service, or run `device-agent run`',
        }
      : { id: 'daemon', verdict: 'pass', detail: `\`device-agent run\` (pid ${daemonPid}) is using this state directory` },
  );
  const lost = (runtime.dropped_results ?? 0) + (runtime.rejected_results ?? 0);
  add({
    id: 'queue',
    verdict: lost > 0 ? 'warn' : 'pass',
    detail: `${queued} result(s) waiting to be sent${lost > 0 ? `; ${runtime.dropped_results ?? 0} dropped (queue full), ${runtime.rejected_results ?? 0} refused by the server` : ''}`,
    ...(lost > 0 ? { next: 'results were lost: check the server and the daemon log' } : {}),
  });
  // Which policy judged the last cycle (docs/agent.md, "Policy"), once the daemon has run one.
  const policy = describePolicySource(runtime.policy);
  if (policy) add({ id: 'policy', verdict: 'pass', detail: policy });
  const problems = [
    runtime.reason ? `credentials wiped at ${runtime.revoked_at ?? 'an unknown time'}: ${runtime.reason}` : null,
    runtime.conflict ? `conflict since ${runtime.conflict.at}: ${runtime.conflict.message}` : null,
    runtime.daemon_message ? `daemon ${runtime.daemon_state ?? ''}: ${runtime.daemon_message}` : null,
  ].filter((p): p is string => p !== null);
  add(
    problems.length === 0
      ? { id: 'last_errors', verdict: 'pass', detail: 'none recorded' }
      : { id: 'last_errors', verdict: 'warn', detail: problems.join('; '), next: 'see `device-agent status` and the daemon log' },
  );
}

function serviceCheck(state: ServiceState): DoctorCheck {
  if (state.kind === 'unknown') return { id: 'service', verdict: 'unknown', detail: state.reason, next: state.next };
  if (state.kind === 'no_manager')
    return { id: 'service', verdict: 'warn', detail: state.reason, next: 'start `device-agent run` another way (see the daemon line)' };
  if (!state.installed)
    return { id: 'service', verdict: 'warn', detail: 'the system service is not installed', next: 'sudo device-agent install' };
  const detail = `${state.name}: ${state.enabled ? 'enabled' : 'not enabled'}, ${state.running ? 'running' : 'not running'}`;
  return state.enabled && state.running
    ? { id: 'service', verdict: 'pass', detail }
    : { id: 'service', verdict: 'fail', detail, next: state.fix };
}

interface Proxy {
  host: string;
  port: number;
  /** The proxy's origin, user name and password left out. */
  shown: string;
}

/** The proxy HTTP(S)_PROXY and NO_PROXY select for `url`, read the way the client (undici) reads them. */
function proxyFor(url: URL, env: NodeJS.ProcessEnv): Proxy | null {
  if (isLoopbackHost(url.hostname)) return null;
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  const raw = url.protocol === 'https:' ? pick('https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY') : pick('http_proxy', 'HTTP_PROXY');
  if (!raw) return null;
  const noProxy = (pick('no_proxy', 'NO_PROXY') ?? '').split(/[\s,]+/).filter(Boolean);
  const host = url.hostname.toLowerCase();
  for (const entry of noProxy) {
    if (entry === '*') return null;
    const [name, entryPort] = entry
      .toLowerCase()
      .replace(/^\*?\./, '.')
      .split(':');
    if (entryPort && entryPort !== (url.port || (url.protocol === 'https:' ? '443' : '80'))) continue;
    if (name === host || (name!.startsWith('.') ? host.endsWith(name!) : host.endsWith(`.${name}`))) return null;
  }
  let proxy: URL;
  try {
    proxy = new URL(raw);
  } catch {
    return { host: raw, port: 0, shown: '(unparsable proxy setting)' };
  }
  const credentials = proxy.username !== '' || proxy.password !== '' ? ' (with credentials)' : '';
  return {
    host: proxy.hostname.replace(/^\[|\]$/g, ''),
    port: Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80)),
    shown: `${proxy.origin}${credentials}`,
  };
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(Date.now() - started);
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs / 1000} s`));
    });
    socket.once('error', reject);
  });
}

async function tlsCheck(host: string, port: number, caFile: string | undefined, timeoutMs: number): Promise<DoctorCheck> {
  const cas = caFile ? `the system roots and ${caFile}` : 'the system roots';
  let extra: string[] = [];
  if (caFile) {
    try {
      extra = [readFileSync(caFile, 'utf8')];
    } catch (err) {
      return {
        id: 'tls',
        verdict: 'fail',
        detail: `cannot read the CA file ${caFile}: ${firstLine(err)}`,
        next: 'fix --ca-file / DEVICE_AGENT_CA_FILE',
      };
    }
  }
  try {
    const peer = await new Promise<DetailedPeerCertificate>((resolve, reject) => {
      const socket = tlsConnect({
        host,
        port,
        servername: isIP(host) ? undefined : host,
        ca: caFile ? [...rootCertificates, ...extra] : undefined,
        rejectUnauthorized: true,
        timeout: timeoutMs,
      });
      socket.once('secureConnect', () => {
        const certificate = socket.getPeerCertificate(true);
        socket.destroy();
        resolve(certificate);
      });
      socket.once('timeout', () => {
        socket.destroy();
        reject(new Error(`no TLS handshake within ${timeoutMs / 1000} s`));
      });
      socket.once('error', reject);
    });
    const daysLeft = Math.floor((Date.parse(peer.valid_to) - Date.now()) / 86_400_000);
    const chain: string[] = [];
    for (
      let cert: DetailedPeerCertificate | undefined = peer;
      cert && chain.length < 5;
      cert = cert.issuerCertificate === cert ? undefined : cert.issuerCertificate
    ) {
      chain.push([cert.subject?.CN ?? '?'].flat().join('/'));
    }
    const detail = `verified against ${cas}: chain ${chain.join(' < ')}; expires ${new Date(peer.valid_to).toISOString()} (${daysLeft} days)`;
    return daysLeft < CERT_EXPIRY_WARNING_DAYS
      ? { id: 'tls', verdict: 'warn', detail, next: 'the server certificate expires soon: tell the server operator' }
      : { id: 'tls', verdict: 'pass', detail };
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      id: 'tls',
      verdict: 'fail',
      detail: `not verified against ${cas}: ${firstLine(err)}${code && !firstLine(err).includes(code) ? ` (${code})` : ''}`,
      next: caFile
        ? 'check that the CA file holds the CA that signed the server certificate'
        : 'if the server uses a private CA, pass it with --ca-file or DEVICE_AGENT_CA_FILE',
    };
  }
}
