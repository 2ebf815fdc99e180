// Bundles each program into one self-contained CommonJS file (contract: "Build outputs").
// Native addons stay external: they are loaded from node_modules, or beside a packaged executable.
import { build } from 'esbuild';


export const entries = {
  'device-agent': 'src/cli/device-agent.ts',
  'device-agent-server': 'src/cli/device-agent-server.ts',
};

export const external = ['better-sqlite3', '@napi-rs/keyring'];

await Promise.all(
  Object.entries(entries).map(([name, entry]) =>
    build({
      entryPoints: [entry],
      outfile: `dist/${name}.cjs`,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external,
      banner: { js: '#!/usr/bin/env node' },
      legalComments: 'none',
      logLevel: 'warning',
    }),
  ),
);
