// Check fixtures: recorded real tool output from one platform plus the verdict it must give.
// Layout: test/fixtures/checks/<platform>/<CHECK_KEY>/<case>.json (see docs/checks.md#fixtures).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CHECK_KEYS, PLATFORMS, PostureStatus, type CheckKey, type Platform } from '../../src/protocol/schemas';
import { createContext } from '../../checks/engine';
import { resolvePolicy } from '../../checks/policy';
import { loadChecks } from '../../checks/registry';
import type { Verdict } from '../../checks/types';
import { FakeHost } from './fakeHost';

export const FIXTURE_ROOT = fileURLToPath(new URL('../fixtures/checks', import.meta.url));
/** Fixtures are judged at a fixed time unless they say otherwise, so lifecycle verdicts do not drift. */
const FIXTURE_NOW = '2026-11-21T12:00:00Z';

const Lines = z.union([z.string(), z.array(z.string())]);
const FsErrorValue = z.object({ error: z.enum(['not_found', 'permission_denied', 'too_large', 'io_error']) });

export const CheckFixture = z.object({
  /** Where the recorded output comes from: a research section, a vendor page, a public test fixture. Required. */
  source: z.string().min(10),
  description: z.string().min(1),
  now: z.string().optional(),
  policy: z.record(z.string(), z.unknown()).optional(),
  host: z.object({
    commands: z
      .array(
        z.object({
          argv: z.array(z.string()).min(1),
          stdout: Lines.optional(),
          stderr: Lines.optional(),
          exitCode: z.number().int().nullable().optional(),
          error: z.enum(['not_found', 'permission_denied', 'timeout', 'output_too_large', 'spawn_failed']).optional(),
        }),
      )
      .optional(),
    files: z.record(z.string(), z.union([Lines, FsErrorValue])).optional(),
    dirs: z.record(z.string(), z.union([z.array(z.string()), FsErrorValue])).optional(),
    links: z.record(z.string(), z.string()).optional(),
    stats: z
      .record(
        z.string(),
        z.object({
          isDirectory: z.boolean().optional(),
          mode: z.number().optional(),
          uid: z.number().optional(),
          gid: z.number().optional(),
          size: z.number().optional(),
          mtime: z.iso.datetime({ offset: true }).optional(),
        }),
      )
      .optional(),
  }),
  expect: z.object({
    status: PostureStatus,
    /** A subset the evidence must contain. */
    evidence: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type CheckFixture = z.infer<typeof CheckFixture>;

export interface LoadedFixture {
  platform: Platform;
  checkKey: CheckKey;
  name: string;
  file: string;
  fixture: CheckFixture;
}

export function listFixtures(): LoadedFixture[] {
  const out: LoadedFixture[] = [];
  for (const platform of PLATFORMS) {
    for (const checkKey of CHECK_KEYS) {
      const dir = path.join(FIXTURE_ROOT, platform.toLowerCase(), checkKey);
      let names: string[];
      try {
        names = readdirSync(dir)
          .filter((n) => n.endsWith('.json'))
          .sort();
      } catch {
        continue;
      }
      for (const name of names) {
        const file = path.join(dir, name);
        const fixture = CheckFixture.parse(JSON.parse(readFileSync(file, 'utf8')));
        out.push({ platform, checkKey, name: name.replace(/\.json$/, ''), file, fixture });
      }
    }
  }
  return out;
}

/** Runs the platform's real collector on the recorded host, then its evaluator. */
export async function runFixture(loaded: LoadedFixture): Promise<{ verdict: Verdict; host: FakeHost }> {
  const check = (await loadChecks(loaded.platform)).find((c) => c.key === loaded.checkKey);
  if (!check) throw new Error(`no ${loaded.checkKey} check registered for ${loaded.platform}`);
  const host = new FakeHost(loaded.fixture.host);
  const policy = resolvePolicy(loaded.fixture.policy ?? {});
  const now = new Date(loaded.fixture.now ?? FIXTURE_NOW);
  const facts = await check.collect(createContext(host, policy, now));
  return { verdict: check.evaluate(facts, policy, now), host };
}
