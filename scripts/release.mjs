#!/usr/bin/env node
// `npm run release`: every artifact that can be built on Linux, into dist/release/ with SHA256SUMS:
// the single-file executables (archives), Debian and RPM packages of the agent and of the server, the Windows MSI, and the macOS
// and FreeBSD package sources to finish on those systems. docs/packaging.md lists them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageAll } from './package.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RELEASE = join(ROOT, 'dist', 'release');

/** Artifact kinds (installers/build.ts) and the tools each needs on this machine. */
const KINDS = {
  archives: ['tar', 'xz', 'zip'],
  deb: ['dpkg-deb'],
  rpm: ['rpmbuild'],
  msi: ['wixl', 'msibuild'],
  macos: ['tar', 'xz'],
  freebsd: ['tar', 'xz'],
  'server-deb': ['dpkg-deb'],
  'server-rpm': ['rpmbuild'],
};

function hasTool(name) {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const kinds = Object.entries(KINDS)
  .filter(([kind, tools]) => {
    const missing = tools.filter((tool) => !hasTool(tool));
    if (missing.length > 0) process.stdout.write(`skipping ${kind}: ${missing.join(', ')} not installed\n`);
    return missing.length === 0;
  })
  .map(([kind]) => kind);

// The server's packages carry dist/device-agent-server.cjs: built afresh, like the agent's bundle.
execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
await packageAll([]);
rmSync(RELEASE, { recursive: true, force: true });
mkdirSync(RELEASE, { recursive: true });
execFileSync(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'installers', 'build.ts'), RELEASE, ...kinds], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

const artifacts = readdirSync(RELEASE).sort();
const sums = artifacts.map(
  (name) =>
    `${createHash('sha256')
      .update(readFileSync(join(RELEASE, name)))
      .digest('hex')}  ${name}`,
);
writeFileSync(join(RELEASE, 'SHA256SUMS'), `${sums.join('\n')}\n`);

process.stdout.write(`\n${RELEASE}:\n`);
for (const name of artifacts) process.stdout.write(`  ${(statSync(join(RELEASE, name)).size / 1e6).toFixed(1).padStart(6)} MB  ${name}\n`);
process.stdout.write('  SHA256SUMS (sha256sum -c SHA256SUMS)\n');
