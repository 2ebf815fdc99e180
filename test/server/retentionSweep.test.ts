// The retention sweep's per-device cap over a real store (SQLite; PostgreSQL in the `postgres`
// project), with the sweep's clock in the test's hands: a device whose last-seen time is older
// than the previous sweep's start (it was written after that sweep looked, as the batched
// last-seen times are) is still trimmed by the next sweep.
import pino from 'pino';
import { expect, test, vi } from 'vitest';
import { uploadPostures } from '../../src/server/deviceLifecycle';
import { startRetention } from '../../src/server/retention';
import { storeForFile } from '../support/testStore';
import { T0, activeDevice, newResult } from './deviceLifecycleSuite';

const store = storeForFile('retention-sweep');

const after = (ms: number) => new Date(Date.parse(T0) + ms);

test('a device seen before the previous sweep began, its last-seen time written after, is trimmed by the next sweep', async () => {
  // Seen at T0; every sweep starts 10 s after that.
  const device = await activeDevice(store());
  const looked = vi.spyOn(store(), 'devicesWithMoreResultsThan');
  const sweeper = startRetention(
    store(),
    { maxAgeMs: 365 * 86_400_000, maxResultsPerDevice: 2, sweepIntervalMs: 10 },
    pino({ enabled: false }),
    () => after(10_000),
  );
  try {
    // The first sweep has looked (at every device) and the second has begun: the previous start is now T0 + 10 s.
    await vi.waitFor(() => expect(looked.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 30_000 });
    expect(looked.mock.calls[1]).toEqual([2, after(10_000 - 10 * 60_000).toISOString()]);
    const upload = await uploadPostures(
      store(),
      device,
      ['A', 'B', 'C'].map((checkKey) => newResult({ checkKey })),
      after(5_000).toISOString(),
    );
    expect(upload.kind).toBe('recorded');
    await vi.waitFor(async () => expect(await store().postureHistory(device, { limit: 10 })).toHaveLength(2), { timeout: 30_000 });
    expect((await store().postureHistory(device, { limit: 10 })).map((r) => r.checkKey)).toEqual(['C', 'B']);
  } finally {
    await sweeper.stop();
    looked.mockRestore();
  }
});
