// Registration load shared by the engine-neutral and the PostgreSQL-only suites.
import { expect } from 'vitest';
import type { DeviceSummary } from '../../src/server/admin';
import { NO_RATE_LIMITS, runServerCli, type RunningServer } from '../support/server';
import { createSecret, listSecrets, register, type Answer } from './client';

/** Every registration from the one test address, at once: no cap on connections or registrations per address. */
export const OPEN_LIMITS = [...NO_RATE_LIMITS, '--max-connections-per-address', '0', '--rate-limit-registrations', '0'];

export async function devicesOf(server: RunningServer, org: string): Promise<DeviceSummary[]> {
  const { stdout } = await runServerCli(['device', 'list', '--db', server.dbPath, '--org', org, '--json']);
  return JSON.parse(stdout) as DeviceSummary[];
}

/** 200 registrations at once against a cap of 150, spread over `servers`: 150 devices, 50 alike 401s, no other answer. */
export async function raceTheCap(servers: readonly RunningServer[], org: string): Promise<void> {
  const [first] = servers as [RunningServer];
  const secret = await createSecret(first, ['--max-uses', '150'], org);
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => register(servers[i % servers.length]!, secret.enroll_secret)));
  const byStatus = new Map<number, Answer[]>();
  for (const answer of answers) byStatus.set(answer.status, [...(byStatus.get(answer.status) ?? []), answer]);
  expect([...byStatus.keys()].sort()).toEqual([200, 401]);
  expect(byStatus.get(200)).toHaveLength(150);
  expect(byStatus.get(401)).toHaveLength(50);
  expect(new Set(byStatus.get(401)!.map((a) => a.text)).size).toBe(1);
  const ids = new Set(byStatus.get(200)!.map((a) => a.body?.device_id));
  expect(ids.size).toBe(150);
  const devices = await devicesOf(first, org);
  expect(devices).toHaveLength(150);
  expect(new Set(devices.map((d) => d.device_id))).toEqual(ids);
  expect(devices.every((d) => d.state === 'PENDING' && d.enroll_secret_id === secret.secret_id)).toBe(true);
  expect((await listSecrets(first)).find((s) => s.secret_id === secret.secret_id)).toMatchObject({ uses: 150, status: 'used_up' });
}
