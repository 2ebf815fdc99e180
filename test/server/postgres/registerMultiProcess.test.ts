// Two server processes on one PostgreSQL database share one enrollment secret's cap exactly: the
// secret's row is locked by each registration's transaction, on whichever server it arrives.
import { afterAll, beforeAll, describe, test } from 'vitest';
import { startServer, type RunningServer } from '../../support/server';
import { OPEN_LIMITS, raceTheCap } from '../registrations';

let servers: RunningServer[] = [];

beforeAll(async () => {
  const first = await startServer({ args: OPEN_LIMITS });
  servers = [first, await startServer({ dbPath: first.dbPath, args: OPEN_LIMITS })];
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

describe('two server processes on one PostgreSQL database', () => {
  test('200 registrations spread over both against a secret capped at 150: exactly 150 devices and 50 identical 401s', async () => {
    await raceTheCap(servers, 'two-servers');
  });
});
