// The Device Agent API wire protocol (../shared/spec/device-agent-api.md), defined once.
// The reference server validates requests with these schemas and the agent client validates
// responses with them; docs/openapi.json is generated from them (scripts/openapi.ts).
import * as z from 'zod';
import { CHECK_KEYS, CREDENTIAL_PATTERN, ERROR_CODES, MAX_EVIDENCE_DEPTH, MAX_RESULTS_PER_REQUEST, PLATFORMS, STATUSES } from './constants';

// The plain values live in constants.ts (no zod), so that light callers need not load zod.
export * from './constants';

export const Platform = z.enum(PLATFORMS).describe('DARWIN = macOS, LINUX = Linux, FREEBSD = FreeBSD, WINDOWS = Windows');
export type Platform = z.infer<typeof Platform>;

export const PostureStatus = z
  .enum(STATUSES)
  .describe(
    'PASS = check passed; FAIL = check failed; UNKNOWN = the agent could not determine the result; NOT_APPLICABLE = the check does not apply to this device',
  );
export type PostureStatus = z.infer<typeof PostureStatus>;

/** The nine official check keys. Servers accept any other non-empty key too. */
export const OfficialCheckKey = z.enum(CHECK_KEYS);
export type CheckKey = z.infer<typeof OfficialCheckKey>;

/** Enrollment tokens and device API keys: 96 hexadecimal characters. */
export const Credential = z.string().regex(CREDENTIAL_PATTERN, 'must be 96 hexadecimal characters');

/** RFC 3339 date-time with an offset; its lowercase `t`/`z` (allowed by RFC 3339 §5.6) normalised to upper case. */
export const Rfc3339 = z
  .string()
  .toUpperCase()
  .pipe(z.iso.datetime({ offset: true, local: false }))
  .meta({ format: 'date-time' });

export const EnrollRequest = z.object({
  token: z.string().min(1).describe('One-time enrollment token (96 hex)'),
});
export type EnrollRequest = z.infer<typeof EnrollRequest>;

export const EnrollResponse = z.object({
  api_key: Credential.describe('Device API key (96 hex); shown only in this response'),
});
export type EnrollResponse = z.infer<typeof EnrollResponse>;

/** Text the server stores in a text column. U+0000 (NUL) is refused: PostgreSQL's text cannot hold it, and both engines answer alike. */
const storedText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((text) => !text.includes('\u0000'), 'must not contain the character U+0000 (NUL)');

export const HeartbeatRequest = z.object({
  hardware_uuid: storedText(255).describe('Stable hardware identifier, unique among devices of the organization'),
  serial_number: storedText(255).optional().describe('Hardware serial number'),
  hostname: storedText(255).describe('Current device hostname'),
  platform: Platform,
  os_version: storedText(255).describe('Human-readable operating-system version'),
  agent_version: storedText(64).describe('Version of the reporting agent implementation (not the API version)'),
});
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

export const HeartbeatResponse = z.object({
  device_id: z.string().min(1).describe('Identifier of the enrolled device'),
  heartbeat_interval_seconds: z.number().int().describe('Delay between heartbeat requests'),
  posture_interval_seconds: z.number().int().describe('Delay between posture collection cycles'),
  server_time: Rfc3339.describe('Current server time, RFC 3339 UTC'),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/** True when no object or array inside `value` sits deeper than `maxDepth` levels (iterative: no stack overflow). */
function nestsAtMost(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > maxDepth) return false;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return true;
}

export const Evidence = z
  .record(z.string(), z.unknown())
  .refine(
    (evidence) => nestsAtMost(evidence, MAX_EVIDENCE_DEPTH),
    `must not nest objects or arrays deeper than ${MAX_EVIDENCE_DEPTH} levels`,
  )
  .describe(`Free-form JSON object supporting the result; objects and arrays nest at most ${MAX_EVIDENCE_DEPTH} levels`);

export const PostureResult = z.object({
  check_key: storedText(128).describe('Stable identifier of the check; the nine official keys are listed in CHECK_KEYS'),
  status: PostureStatus,
  evidence: Evidence.optional(),
  observed_at: Rfc3339.describe('Observation time, RFC 3339'),
  correlation_id: z.string().min(1).max(128).optional().describe('ID of an existing posture report of the same tenant'),
});
export type PostureResult = z.infer<typeof PostureResult>;

export const PosturesRequest = z.object({
  results: z
    .array(PostureResult)
    .max(MAX_RESULTS_PER_REQUEST)
    .describe(`Up to ${MAX_RESULTS_PER_REQUEST} posture results; an empty array is a no-op`),
});
export type PosturesRequest = z.infer<typeof PosturesRequest>;

export const UnenrollRequest = z.object({}).describe('No request fields are required');

export const ErrorBody = z.object({
  error: z.enum(ERROR_CODES).describe('Machine-readable error code'),
  message: z.string().describe('Human-readable explanation; clients must not depend on its wording'),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
export type ErrorCode = z.infer<typeof ErrorBody>['error'];
