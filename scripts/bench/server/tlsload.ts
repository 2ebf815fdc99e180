// The TLS benchmarks' load generator (tlsload.c), built with the system's C compiler and OpenSSL
// into the run's directory, and run in its own processes: one JSON line per run.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SOURCE = fileURLToPath(new URL('tlsload.c', import.meta.url));

export type TlsTransport = 'full' | 'resume' | 'keep-alive';

export interface TlsLoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection failures, timeouts and answers that were not 2xx. */
  errors: number;
  /** Share of the run's new connections that resumed a session (0 on keep-alive). */
  resumedShare: number;
  /** The load generator's CPU (all its processes), share of one core. */
  clientCpu: number;
}

/** Compiles tlsload.c into `dir`; its path. */
export async function buildTlsLoad(dir: string): Promise<string> {
  const binary = join(dir, 'tlsload');
  await run('cc', ['-O2', '-o', binary, SOURCE, '-lssl', '-lcrypto']).catch((error: unknown) => {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no C compiler (cc)' : (error as { stderr?: string }).stderr;
    throw new Error(`cannot build the TLS load generator: ${reason}; Debian: apt-get install -y gcc libssl-dev`);
  });
  return binary;
}

/** One closed-loop run against `url` (an https://<IPv4>:<port> origin) with the requests of `requestFile` (wrk.lua's format). */
export async function tlsLoad(
  binary: string,
  options: { url: string; requestFile: string; transport: TlsTransport; connections: number; seconds: number },
): Promise<TlsLoadResult> {
  const { hostname, port } = new URL(options.url);
  const { stdout } = await run(
    binary,
    [hostname, port, options.requestFile, options.transport, String(options.connections), String(options.seconds)],
    { maxBuffer: 1 << 20 },
  );
  const result = JSON.parse(stdout) as {
    requests: number;
    duration_us: number;
    errors: number;
    connections: number;
    resumed: number;
    p50_us: number;
    p99_us: number;
    client_cpu_s: number;
  };
  const seconds = result.duration_us / 1e6;
  return {
    requests: result.requests,
    perSecond: result.requests / seconds,
    p50Ms: result.p50_us / 1000,
    p99Ms: result.p99_us / 1000,
    errors: result.errors,
    resumedShare: options.transport === 'keep-alive' || result.connections === 0 ? 0 : result.resumed / result.connections,
    clientCpu: result.client_cpu_s / seconds,
  };
}
