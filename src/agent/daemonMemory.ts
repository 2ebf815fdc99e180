// V8 settings of `device-agent run`, a process that lives for months and works a few milliseconds an
// hour: memory matters more than the speed of code that hardly runs. Applied by the run command
// before it loads the daemon's modules (a flag read when the heap grows or when WebAssembly compiles
// must be set before either happens), whether the program runs on a system Node or as the single
// executable. Measured by `npm run bench:footprint` on Node 20 and 24 (docs/performance.md).
import { setFlagsFromString } from 'node:v8';

const DAEMON_V8_FLAGS: readonly string[] = [
  // The young generation doubles whenever a scavenge finds much of it alive, as loading the bundle
  // does: it reached 8 or 16 MiB by the end of the first cycle and kept them. It now stays at 2 MiB,
  // for a few more scavenges while a cycle runs.
  '--semi-space-growth-factor=1',
  // undici parses HTTP with llhttp compiled to WebAssembly; the optimizing tier recompiles it in the
  // background (tens of MiB at the peak, megabytes of code kept) for a parser that reads a few
  // hundred bytes every few minutes. Baseline code only. Node 24's V8 needs all three to keep it.
  '--liftoff-only',
  '--no-wasm-tier-up',
  '--no-wasm-dynamic-tiering',
];

export function applyDaemonMemorySettings(): void {
  for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
}
