// How wrk (wrk.lua) reaches the server in the plain-HTTP benchmarks: `npm run bench:heartbeat`
// (BENCH_TRANSPORT) and the plain-HTTP searches of `npm run bench:fleet`. The TLS transports are
// tlsload.ts's.
export const TRANSPORTS = {
  'keep-alive':
    'plain HTTP, connections kept alive between requests (what the server sees behind a proxy that keeps its upstream connections open; agents on a 300 s schedule reaching it directly hold none open)',
  close: 'plain HTTP, a new connection for every request (what agents on the real schedule do)',
} as const;

export type Transport = keyof typeof TRANSPORTS;

export function parseTransport(value: string | undefined, fallback: Transport): Transport {
  if (value === undefined || value === '') return fallback;
  if (value in TRANSPORTS) return value as Transport;
  throw new Error(`BENCH_TRANSPORT must be one of: ${Object.keys(TRANSPORTS).join(', ')}`);
}
