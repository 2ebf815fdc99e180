// Types for the JSON the daemon tests read but do not produce: the daemon's log lines, the request
// bodies the fault proxy saw, and the admin CLI's `device show --json`. The shapes come from
// src/agent/logger.ts, src/protocol/schemas.ts and src/server/admin.ts; the helpers take `unknown`
// so a caller never handles an untyped value.
import type { HeartbeatResponse, PosturesRequest } from '../../src/protocol/schemas';
import type { DeviceDetails } from '../../src/server/admin';
import type { RunningServer } from './server';

/** One line of the daemon's pino JSON log: the level is its label ('info', 'warn', …). */
export interface DaemonLogLine {
  level: string;
  time: string;
  pid: number;
  msg?: string;
  event?: string;
  /** On `event: 'state'` lines: the daemon state entered. */
  state?: string;
  [field: string]: unknown;
}

/** The line that closes a posture cycle, with its counts. */
export interface PostureCycleLine extends DaemonLogLine {
  event: 'posture_cycle';
  results: number;
  pass: number;
  fail: number;
  unknown: number;
  not_applicable: number;
  sent: number;
  queued: number;
  duration_ms: number;
}

/** Pino levels at or above warn, as labels. */
export const WARN_OR_WORSE: readonly string[] = ['warn', 'error', 'fatal'];

export function parseLogLine(text: string): DaemonLogLine {
  return JSON.parse(text) as DaemonLogLine;
}

export function isPostureCycle(line: DaemonLogLine): line is PostureCycleLine {
  return line.event === 'posture_cycle';
}

/** A posture upload body the proxy recorded (its `body`, or a fault rule's `when` argument). */
export function postureBody(body: unknown): PosturesRequest {
  return body as PosturesRequest;
}

/** A heartbeat answer on its way through the proxy (a `rewrite` fault's argument). */
export function heartbeatAnswer(body: unknown): HeartbeatResponse {
  return body as HeartbeatResponse;
}

/** `device show --json`, typed. */
export async function deviceDetails(server: RunningServer, deviceId: string): Promise<DeviceDetails> {
  const shown: unknown = await server.showDevice(deviceId);
  return shown as DeviceDetails;
}
