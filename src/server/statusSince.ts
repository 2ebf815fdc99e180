// When a check's current status began ("failing since"): the observation that first showed that
// status after a different one. Decided here for every engine, per upload; the stores keep it with
// each check's latest result (latest_results.status_since) and only carry out the rule below.
import type { PostureStatus } from '../protocol/schemas';

/** Where the status of a result began, as far as its upload tells. */
export interface StatusRun {
  /** observed_at of the first of the upload's consecutive results of this check with this status, ending at this one. */
  runStartedAt: string;
  /**
   * That first result is the upload's first of this check: the status may have begun before the
   * upload. The check's status then began when the stored one did, if the stored status is the
   * same; else (a different or no stored status, or a change within the upload) at runStartedAt.
   */
  runOpensUpload: boolean;
}

/** Each result's run, in the order the upload carries them (the agent's order of observation). */
export function statusRuns(results: readonly { checkKey: string; status: PostureStatus; observedAt: string }[]): StatusRun[] {
  const current = new Map<string, { status: PostureStatus } & StatusRun>();
  return results.map(({ checkKey, status, observedAt }) => {
    const before = current.get(checkKey);
    const run = before?.status === status ? before : { status, runStartedAt: observedAt, runOpensUpload: before === undefined };
    current.set(checkKey, run);
    return { runStartedAt: run.runStartedAt, runOpensUpload: run.runOpensUpload };
  });
}
