// The ticket-key ring's clock: which key seals, when the grace after a switch holds, and when the
// next change comes (the moments at which `serve` re-installs its keys), on a real key file with a
// clock the test moves.
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../support/agent';
import { TicketKeyRing } from '../../src/server/ticketKeys';

const ROTATION_MS = 60_000;
const GRACE_MS = 10_000;

describe('TicketKeyRing', () => {
  test('a switch starts a grace in which the previous key still opens tickets; the next change is the end of the grace, then the next switch', () => {
    let now = Date.parse('2026-11-27T12:00:00Z');
    const ring = TicketKeyRing.open(
      join(tempDir('device-agent-ticket-keys-'), 'keys'),
      { rotationMs: ROTATION_MS, lifetimeMs: GRACE_MS },
      () => now,
    );
    const first = ring.current();
    const switchAt = first.activatesAt + ROTATION_MS;
    expect(ring.inGrace()).toBe(false);
    expect(ring.nextChange()).toBe(switchAt);

    now = switchAt - 1;
    expect({ same: ring.current() === first, grace: ring.inGrace() }).toEqual({ same: true, grace: false });

    now = switchAt;
    const second = ring.current();
    expect(second).not.toBe(first);
    expect(ring.inGrace()).toBe(true);
    expect(ring.accepting(first.key.subarray(0, 16))).toBe(first);
    expect(ring.nextChange()).toBe(switchAt + GRACE_MS);

    now = switchAt + GRACE_MS - 1;
    expect(ring.inGrace()).toBe(true);
    now = switchAt + GRACE_MS;
    expect(ring.inGrace()).toBe(false);
    expect(ring.accepting(first.key.subarray(0, 16))).toBeUndefined();
    expect(ring.current()).toBe(second);

    // Once a next key is written (maintain), the next change is its switch.
    ring.maintain();
    expect(ring.nextChange()).toBe(switchAt + ROTATION_MS);
  });
});
