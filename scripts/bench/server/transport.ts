// How the benchmarks' load generators reach the server. Each transport is one option of
// `npm run bench:fleet` (BENCH_TRANSPORT); a TLS transport (issue 18) adds its name here and its
// connection options in the generators (wrk.lua, fleetLoad.ts).
export const TRANSPORTS = {
  'keep-alive': 'plain HTTP, connections kept alive between requests (an upper bound: agents on a 300 s schedule hold none open)',
  close: 'plain HTTP, a new connection for every request (what agents on the real schedule do)',
} as const;

export type Transport = keyof typeof TRANSPORTS;

export function parseTransport(value: string | undefined, fallback: Transport): Transport {
  if (value === undefined || value === '') return fallback;
  if (value in TRANSPORTS) return value as Transport;
  throw new Error(`BENCH_TRANSPORT must be one of: ${Object.keys(TRANSPORTS).join(', ')}`);
}
