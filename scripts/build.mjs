// Bundles each program into one self-contained CommonJS file (contract: "Build outputs").
// Native addons stay external: they are loaded from node_modules, or beside a packaged executable.
import { build } from 'esbuild';
import { chmodSync, renameSync } from 'node:fs';

export const entries = {
  'device-agent': 'src/cli/device-agent.ts',
  'device-agent-server': 'src/cli/device-agent-server.ts',
};

export const external = ['better-sqlite3', 'better-sqlite3-napi', '@napi-rs/keyring'];

await Promise.all(
  Object.entries(entries).map(async ([name, entry]) => {
    // Written aside and renamed, so a program started meanwhile never reads a half-written bundle.
    const outfile = `dist/${name}.cjs`;
    const partial = `dist/.${name}.${process.pid}.cjs`;
    await build({
      entryPoints: [entry],
      outfile: partial,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external,
      banner: { js: '#!/usr/bin/env node' },
      legalComments: 'none',
      logLevel: 'warning',
    });
    chmodSync(partial, 0o755);
    renameSync(partial, outfile);
  }),
);
