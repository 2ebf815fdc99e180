// Writes test/fixtures/checks/windows/** from fixtureCases.ts: `npx tsx test/checks/windows/writeFixtures.ts`.
// Run it after changing a case or the probe script; fixtureFiles.test.ts fails until the files match.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURE_ROOT } from '../../support/checkFixtures';
import { WINDOWS_FIXTURE_CASES } from './fixtureCases';
import { fixturePath, fixtureText } from './fixtureFiles';

const root = path.join(FIXTURE_ROOT, 'windows');
const wanted = new Set(WINDOWS_FIXTURE_CASES.map(fixturePath));
for (const dir of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory())) {
  for (const file of readdirSync(path.join(root, dir.name))) {
    const full = path.join(root, dir.name, file);
    if (file.endsWith('.json') && !wanted.has(full)) rmSync(full);
  }
}
for (const c of WINDOWS_FIXTURE_CASES) {
  mkdirSync(path.dirname(fixturePath(c)), { recursive: true });
  writeFileSync(fixturePath(c), fixtureText(c));
}
console.log(`wrote ${WINDOWS_FIXTURE_CASES.length} Windows fixtures under ${path.relative(process.cwd(), root)}`);
