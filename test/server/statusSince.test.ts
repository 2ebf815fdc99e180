// The rule of "failing since" within one upload (src/server/statusSince.ts); what the stores make of
// it across uploads is tested through the agent API in failingSince.test.ts.
import { expect, test } from 'vitest';
import type { PostureStatus } from '../../src/protocol/schemas';
import { statusRuns } from '../../src/server/statusSince';

const r = (checkKey: string, status: PostureStatus, observedAt: string) => ({ checkKey, status, observedAt });

test('each result: where its status began in the upload, and whether that was the check first result in it', () => {
  expect(
    statusRuns([
      r('A', 'FAIL', 't1'),
      r('B', 'PASS', 't1'),
      r('A', 'FAIL', 't2'),
      r('A', 'PASS', 't3'),
      r('B', 'PASS', 't3'),
      r('A', 'PASS', 't4'),
      r('A', 'FAIL', 't5'),
    ]),
  ).toEqual([
    { runStartedAt: 't1', runOpensUpload: true },
    { runStartedAt: 't1', runOpensUpload: true },
    { runStartedAt: 't1', runOpensUpload: true },
    { runStartedAt: 't3', runOpensUpload: false },
    { runStartedAt: 't1', runOpensUpload: true },
    { runStartedAt: 't3', runOpensUpload: false },
    { runStartedAt: 't5', runOpensUpload: false },
  ]);
  expect(statusRuns([])).toEqual([]);
});
