// A fleet of a few hundred devices for the console's working-screen tests, enrolled through the real
// agent API (enrollment secret → /register → /enroll → /heartbeat → /postures), quickly: several
// devices at a time. What each device reports is a pure function of its index, so a test knows the
// statuses, versions, labels and "failing since" times it must see.
import { expect } from 'vitest';
import { CHECK_KEYS, PLATFORMS, type PostureStatus } from '../../src/protocol/schemas';
import type { RunningServer } from '../support/server';
import { enroll, heartbeat, heartbeatBody, postures, register } from '../server/client';

const OS_RELEASES: Record<(typeof PLATFORMS)[number], [string, string]> = {
  DARWIN: ['14.6.1', '15.1'],
  LINUX: ['Debian GNU/Linux 12 (bookworm)', 'Ubuntu 24.04.1 LTS'],
  FREEBSD: ['14.1-RELEASE', '13.4-RELEASE'],
  WINDOWS: ['10.0.22631', '10.0.26100'],
};
const AGENT_VERSIONS = ['0.3.0', '0.3.0', '0.2.1', '0.1.0'];
const HOSTS: Record<(typeof PLATFORMS)[number], string> = { DARWIN: 'mac', LINUX: 'build', FREEBSD: 'bsd', WINDOWS: 'win' };

export interface FleetDevice {
  index: number;
  deviceId: string;
  hostname: string;
  platform: (typeof PLATFORMS)[number];
  osVersion: string;
  agentVersion: string;
  team: 'finance' | 'eng';
  /** Per check: the status of its latest result (a check missing here was never reported), and when it began. */
  latest: Record<string, { status: PostureStatus; since: string }>;
}

/** The status of check `c` on device `i` at its earlier (0) and later (1) observation. */
function statusOf(i: number, c: number, observation: 0 | 1): PostureStatus {
  const h = (i * 7 + c * 13 + observation * 3 * (i % 3)) % 10;
  return h < 2 ? 'FAIL' : h === 2 ? 'UNKNOWN' : h === 3 && c % 4 === 1 ? 'NOT_APPLICABLE' : 'PASS';
}

export function fleetDevice(index: number, observedBase: number): Omit<FleetDevice, 'deviceId'> & { results: object[] } {
  const platform = PLATFORMS[index % PLATFORMS.length]!;
  const hostname = `${HOSTS[platform]}-${String(index).padStart(4, '0')}`;
  const results: object[] = [];
  const latest: FleetDevice['latest'] = {};
  const at = (hoursAgo: number) => new Date(observedBase - hoursAgo * 3_600_000).toISOString();
  CHECK_KEYS.forEach((check, c) => {
    // Every seventh device has never reported MALWARE_PROTECTION.
    if (check === 'MALWARE_PROTECTION' && index % 7 === 0) return;
    const [earlier, later] = [statusOf(index, c, 0), statusOf(index, c, 1)];
    for (const [status, hoursAgo] of [
      [earlier, 2],
      [later, 1],
    ] as const) {
      const evidence =
        status === 'FAIL'
          ? { rule: c % 2 === 0 ? 'not_enforced' : 'disabled' }
          : status === 'PASS'
            ? { rule: 'ok' }
            : { reason: 'probe_failed' };
      results.push({ check_key: check, status, evidence, observed_at: at(hoursAgo) });
    }
    latest[check] = { status: later, since: earlier === later ? at(2) : at(1) };
  });
  return {
    index,
    hostname,
    platform,
    osVersion: OS_RELEASES[platform][Math.floor(index / PLATFORMS.length) % 2]!,
    agentVersion: AGENT_VERSIONS[Math.floor(index / 3) % AGENT_VERSIONS.length]!,
    team: index % 5 < 2 ? 'finance' : 'eng',
    latest,
    results,
  };
}

/** Enrolls devices `from` to `to` - 1 with the team's secret, `parallel` at a time. */
export async function enrollFleet(
  server: RunningServer,
  secrets: Record<FleetDevice['team'], string>,
  from: number,
  to: number,
  observedBase: number,
  parallel = 6,
): Promise<FleetDevice[]> {
  const devices: FleetDevice[] = [];
  let next = from;
  const worker = async () => {
    while (next < to) {
      const { results, ...spec } = fleetDevice(next++, observedBase);
      const identity = heartbeatBody({
        hostname: spec.hostname,
        platform: spec.platform,
        os_version: spec.osVersion,
        agent_version: spec.agentVersion,
      });
      const registered = await register(server, secrets[spec.team], identity);
      expect(registered.status, registered.text).toBe(200);
      const enrolled = await enroll(server, registered.body?.enrollment_token);
      expect(enrolled.status, enrolled.text).toBe(200);
      const apiKey = String(enrolled.body?.api_key);
      const beat = await heartbeat(server, apiKey, identity);
      expect(beat.status, beat.text).toBe(200);
      const sent = await postures(server, apiKey, { results });
      expect(sent.status, sent.text).toBe(204);
      devices.push({ ...spec, deviceId: String(registered.body?.device_id) });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return devices.sort((a, b) => a.index - b.index);
}
