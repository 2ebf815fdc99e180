// A rollout (issue 28): FLEET real agent processes (the built CLI, each with its own state directory,
// file key store and test identity), STARTING of them at a time, enroll with one enrollment secret capped at CAP, against
// the real server over HTTP, on SQLite and (the `postgres` project) PostgreSQL. Exactly CAP devices,
// the others a clean exit 3 with the documented message and nothing stored, no 5xx in the server's
// log, and the secret in no output, state file or server log.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { agentEnv, listStateFiles, runAgent, tempDir, type AgentResult } from '../support/agent';
import { logEntries, runServerCli } from '../support/server';
import { common, stateDir, useServer } from './cliHelpers';

const FLEET = 200;
const CAP = 150;
const MAX_ATTEMPTS = 4;
/** Agent processes alive at once (see below). */
const STARTING = 50;

// Per-request lines (debug) are the log this test reads for statuses.
const running = useServer({ args: ['--log-level', 'debug'] });

test(
  `${FLEET} agents (${STARTING} at a time) enroll with one secret capped at ${CAP}: exactly ${CAP} devices, ${FLEET - CAP} clean refusals, no 5xx`,
  async () => {
    const server = running.current;
    const org = `fleet-${process.pid}`;
    const created = JSON.parse(
      (await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', org, '--max-uses', String(CAP), '--json'])).stdout,
    ) as { secret_id: string; enroll_secret: string };
    const secretFile = join(tempDir(), 'enroll-secret');
    writeFileSync(secretFile, `${created.enroll_secret}\n`, { mode: 0o600 });

    const dirs = Array.from({ length: FLEET }, () => stateDir());
    // All FLEET processes are started, at most STARTING at a time: Node's start-up is the heavy part,
    // and two cores starting 200 at once starve the server (requests time out). An agent that timed
    // out all the same (exit 4, nothing stored) is run again, as an installer does (the package hook
    // keeps enroll.env for that).
    const retried: number[] = [];
    const enrollOne = async (i: number) => {
      const dir = dirs[i]!;
      const env = agentEnv({ DEVICE_AGENT_TEST_HARDWARE_UUID: `fleet-${process.pid}-${i}`, DEVICE_AGENT_TEST_HOSTNAME: `fleet-host-${i}` });
      for (let attempt = 1; ; attempt++) {
        const result = await runAgent(['enroll', '--server', server.url, '--enroll-secret-file', secretFile, ...common(dir)], {
          env,
          timeoutMs: 15 * 60_000,
        });
        if (result.code !== 4 || attempt === MAX_ATTEMPTS) return result;
        // Not enrolled; at most the registration kept for the next run (its token not yet spent).
        expect(listStateFiles(dir).filter((f) => !f.isDirectory && f.path !== 'registration.json')).toEqual([]);
        retried.push(i);
      }
    };
    const results: AgentResult[] = new Array<AgentResult>(FLEET);
    let next = 0;
    await Promise.all(
      Array.from({ length: STARTING }, async () => {
        while (next < FLEET) {
          const i = next++;
          results[i] = await enrollOne(i);
        }
      }),
    );
    console.info(`${FLEET} agents: ${retried.length} runs timed out and were run again (${new Set(retried).size} agents)`);

    const codes = results.map((r) => r.code);
    const enrolled = dirs.filter((_dir, i) => codes[i] === 0);
    const refused = results.filter((r) => r.code === 3);
    expect({ enrolled: enrolled.length, refused: refused.length }, results.find((r) => r.code !== 0 && r.code !== 3)?.stderr).toEqual({
      enrolled: CAP,
      refused: FLEET - CAP,
    });
    for (const result of refused) {
      expect(result.stderr).toMatch(
        /^device-agent: the server refused the enrollment secret: unknown, revoked, expired or used up: ask for a current secret or a one-time token \(nothing was stored\)$/m,
      );
    }
    // Nothing stored by a refused agent; each enrolled one records the secret's id.
    dirs.forEach((dir, i) => {
      const files = listStateFiles(dir).filter((f) => !f.isDirectory);
      if (codes[i] === 3) expect(files).toEqual([]);
      else
        expect(JSON.parse(readFileSync(join(dir, 'enrollment.json'), 'utf8'))).toMatchObject({
          state: 'enrolled',
          enrolled_with: { method: 'enroll_secret', secret_id: created.secret_id },
        });
    });

    const devices = JSON.parse((await runServerCli(['device', 'list', '--db', server.dbPath, '--org', org, '--json'])).stdout) as {
      device_id: string;
      hardware_uuid: string | null;
    }[];
    expect(devices).toHaveLength(CAP);
    expect(new Set(devices.map((d) => d.hardware_uuid)).size).toBe(CAP);
    const listed = JSON.parse((await runServerCli(['secret', 'list', '--db', server.dbPath, '--org', org, '--json'])).stdout) as {
      secret_id: string;
      uses: number;
    }[];
    expect(listed).toEqual([expect.objectContaining({ secret_id: created.secret_id, uses: CAP })]);

    const answered = logEntries(server.logs()).filter((line) => line.msg === 'request' && typeof line.status === 'number');
    const statuses = (path: string) => answered.filter((line) => line.path === path).map((line) => line.status);
    expect(answered.filter((line) => (line.status as number) >= 500)).toEqual([]);
    const registers = statuses('/api/agent/v1/register');
    // More than CAP answers 200 only where an agent registered again after its /enroll answer was
    // lost: the server gave its record a new token (no second use, no second device: counted above).
    expect(registers.filter((s) => s === 200).length).toBeGreaterThanOrEqual(CAP);
    expect(registers.filter((s) => s === 401)).toHaveLength(FLEET - CAP);
    expect(statuses('/api/agent/v1/enroll').filter((s) => s === 200)).toHaveLength(CAP);

    const secretText = created.enroll_secret.slice(4);
    expect(server.logs()).not.toContain(secretText);
    for (const result of results) expect(result.stdout + result.stderr).not.toContain(secretText);
    for (const dir of enrolled) {
      for (const file of listStateFiles(dir).filter((f) => !f.isDirectory)) {
        expect(readFileSync(join(dir, file.path), 'utf8')).not.toContain(secretText);
      }
    }
    // Two cores starting FLEET Node processes take minutes; the bound only decides how long a hang takes to fail.
  },
  20 * 60_000,
);
