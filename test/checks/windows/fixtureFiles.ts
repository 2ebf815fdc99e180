// Renders the Windows fixture cases into the shared fixture format (test/support/checkFixtures.ts).
import path from 'node:path';
import { POWERSHELL, powershellArgs } from '../../../checks/windows/powershell';
import { PROBE_SCRIPT } from '../../../checks/windows/probe';
import { FIXTURE_ROOT, type CheckFixture } from '../../support/checkFixtures';
import type { WindowsFixtureCase } from './fixtureCases';
import { baselineProbe, probeStdout } from './probeDocument';

const PROBE_ARGV = [POWERSHELL, ...powershellArgs(PROBE_SCRIPT)];

export function fixturePath(c: WindowsFixtureCase): string {
  return path.join(FIXTURE_ROOT, 'windows', c.check, `${c.name}.json`);
}

function renderFixture(c: WindowsFixtureCase): CheckFixture {
  const doc = baselineProbe();
  c.machine?.(doc);
  const probe = { argv: PROBE_ARGV, ...(c.probeResult ?? { stdout: probeStdout(doc) }) };
  return {
    source: c.source,
    description: c.description,
    ...(c.now ? { now: c.now } : {}),
    ...(c.policy ? { policy: c.policy } : {}),
    host: { commands: [probe, ...(c.unusedCommands ?? [])], ...(c.files ? { files: c.files } : {}) },
    expect: c.expect,
  };
}

export const fixtureText = (c: WindowsFixtureCase) => `${JSON.stringify(renderFixture(c), null, 2)}\n`;
