// `status` shows the last posture cycle's failing checks with what they mean: the built CLI runs a
// real cycle (`run --once`) against the real reference server, and the texts never reach /postures.
import { describe, expect, it } from 'vitest';
import { runAgent } from '../support/agent';
import { common, enrolledDir, useServer } from './cliHelpers';
import type { LastCycle } from '../../src/agent/lastCycle';
import type { StatusReport } from '../../src/agent/status';
import { parseJson } from '../support/json';
import { anyString } from '../support/matchers';

const running = useServer();

interface Explained {
  check_key: string;
  status: string;
  summary: string;
}

describe('status after a posture cycle', () => {
  it("lists the cycle's FAIL and UNKNOWN checks with their summaries, which /postures never carried; unenroll clears them", async () => {
    const { dir, device } = await enrolledDir(running.current);
    const before = await runAgent(['status', ...common(dir)]);
    expect(before.stdout).toMatch(/^Last posture cycle: +none yet$/m);

    const once = await runAgent(['run', '--once', ...common(dir)]);
    expect(once.code, once.stderr + once.stdout).toBe(0);
    const local = JSON.parse((await runAgent(['check', '--json'])).stdout) as Explained[];
    const failing = local.filter((r) => r.status === 'FAIL' || r.status === 'UNKNOWN');

    const human = await runAgent(['status', ...common(dir)]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      new RegExp(
        `^Last posture cycle: +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: ${local.length} checks, ${local.filter((r) => r.status === 'FAIL').length} failing, ${local.filter((r) => r.status === 'UNKNOWN').length} undecided$`,
        'm',
      ),
    );
    for (const r of failing)
      expect(human.stdout).toContain(`${r.check_key.padEnd(Math.max(...failing.map((f) => f.check_key.length)))}  ${r.summary}`);
    for (const r of local.filter((x) => x.status === 'PASS')) expect(human.stdout).not.toContain(r.summary);
    if (failing.length > 0) expect(human.stdout).toContain('Run `device-agent check` to see how to fix each one.');

    const json = parseJson<StatusReport & { last_cycle?: LastCycle }>((await runAgent(['status', '--json', ...common(dir)])).stdout);
    expect(json.last_cycle?.failing).toEqual(
      failing.map((r) => ({ check_key: r.check_key, status: r.status, word: anyString(), summary: r.summary })),
    );
    expect(JSON.stringify(json.last_cycle)).not.toContain('evidence');

    // What the server received: the results, their evidence, none of the texts.
    const shown = await running.current.showDevice(device.device_id);
    expect(shown.postures).toHaveLength(local.length);
    const sent = JSON.stringify(shown.postures.map(({ remediation: _server, ...posture }: { remediation: unknown }) => posture));
    for (const r of local) expect(sent).not.toContain(r.summary);

    const unenrolled = await runAgent(['unenroll', ...common(dir)]);
    expect(unenrolled.code, unenrolled.stderr).toBe(0);
    const after = await runAgent(['status', '--json', ...common(dir)]);
    expect(parseJson<StatusReport>(after.stdout).last_cycle).toBeUndefined();
  });
});
