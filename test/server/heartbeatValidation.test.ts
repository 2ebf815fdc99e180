// The heartbeat's check without zod (plainHeartbeat) gives the schema's verdict: a body it accepts
// skips zod, so it must never accept one the schema refuses, and it accepts every one the schema
// does but for strings past a limit in UTF-16 units (zod counts code points), which zod decides.
import { describe, expect, test } from 'vitest';
import { HeartbeatRequest, PLATFORMS } from '../../src/protocol/schemas';
import { plainHeartbeat } from '../../src/server/routes/heartbeat';

const VALID = {
  hardware_uuid: '4C4C4544-0042-3510-8052-B7C04F4E4B32',
  serial_number: 'C02XL0GHJGH5',
  hostname: 'build-01',
  platform: 'LINUX',
  os_version: 'Debian GNU/Linux 12 (bookworm)',
  agent_version: '1.4.0',
};
const TEXT_FIELDS = ['hardware_uuid', 'serial_number', 'hostname', 'os_version', 'agent_version'] as const;
const VALUES: unknown[] = [
  undefined,
  null,
  0,
  true,
  [],
  {},
  ['x'],
  '',
  'a',
  'x'.repeat(63),
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(254),
  'x'.repeat(255),
  'x'.repeat(256),
  '\u0000',
  'a\u0000b',
  // Past the limit in UTF-16 units, within it in code points (zod accepts), and past it in both.
  '😀'.repeat(127) + 'x',
  '😀'.repeat(128),
  '😀'.repeat(256),
  ...PLATFORMS,
  'linux',
  'Linux ',
];

function withField(field: string, value: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { ...VALID };
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
}

const bodies: [string, unknown][] = [
  ['a valid heartbeat', VALID],
  ['with unknown fields', { ...VALID, extra: { nested: [1] }, policy_version: '3.1' }],
  ...PLATFORMS.map((platform): [string, unknown] => [`platform ${platform}`, withField('platform', platform)]),
  ...[null, [], [VALID], 'text', 5, true, {}].map((body): [string, unknown] => [`root ${JSON.stringify(body)}`, body]),
  ...[...TEXT_FIELDS, 'platform'].flatMap((field) =>
    VALUES.map((value): [string, unknown] => [`${field} = ${JSON.stringify(value)?.slice(0, 24)}`, withField(field, value)]),
  ),
];

describe('plainHeartbeat', () => {
  test.each(bodies)('%s: the same verdict as the schema, or left to it', (_name, body) => {
    const accepted = HeartbeatRequest.safeParse(body).success;
    // zod counts a string's length in code points: one longer than the limit in UTF-16 units
    // may still fit, and is left to zod.
    const leftToZod = TEXT_FIELDS.some((field) => {
      const value = (body as Record<string, unknown> | null)?.[field];
      return typeof value === 'string' && value.length > (field === 'agent_version' ? 64 : 255);
    });
    if (leftToZod) expect(plainHeartbeat(body)).toBe(false);
    else expect(plainHeartbeat(body)).toBe(accepted);
  });

  test('the cases include bodies both accept and bodies both refuse for every field', () => {
    for (const field of [...TEXT_FIELDS, 'platform']) {
      const verdicts = VALUES.map((value) => plainHeartbeat(withField(field, value)));
      expect(verdicts, field).toContain(true);
      expect(verdicts, field).toContain(false);
    }
  });
});
