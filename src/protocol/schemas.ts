// The Device Agent API wire protocol (../shared/spec/device-agent-api.md), defined once.
// The reference server validates requests with these schemas and the agent client validates
// responses with them; docs/openapi.json is generated from them (scripts/openapi.ts).
// zod/mini, not classic zod: a mini schema carries no methods per instance, so building these
// schemas costs the agent's start-up about 1 ms instead of 15-30 ms (docs/performance.md, "The agent's start-up").
import * as z from 'zod/mini';
import { Rfc3339 } from './rfc3339';
import { CHECK_KEYS, CREDENTIAL_PATTERN, ERROR_CODES, MAX_EVIDENCE_DEPTH, MAX_RESULTS_PER_REQUEST, PLATFORMS, STATUSES } from './constants';

// The plain values live in constants.ts (no zod), so that light callers need not load zod.
export * from './constants';
export { Rfc3339 } from './rfc3339';

export const Platform = z.enum(PLATFORMS).check(z.describe('DARWIN = macOS, LINUX = Linux, FREEBSD = FreeBSD, WINDOWS = Windows'));
export type Platform = z.infer<typeof Platform>;

export const PostureStatus = z
  .enum(STATUSES)
  .check(
    z.describe(
      'PASS = check passed; FAIL = check failed; UNKNOWN = the agent could not determine the result; NOT_APPLICABLE = the check does not apply to this device',
    ),
  );
export type PostureStatus = z.infer<typeof PostureStatus>;

/** The nine official check keys. Servers accept any other non-empty key too. */
export const OfficialCheckKey = z.enum(CHECK_KEYS);
export type CheckKey = z.infer<typeof OfficialCheckKey>;

/** Enrollment tokens and device API keys: 96 hexadecimal characters. */
export const Credential = z.string().check(z.regex(CREDENTIAL_PATTERN, 'must be 96 hexadecimal characters'));

export const EnrollRequest = z.object({
  token: z.string().check(z.minLength(1), z.describe('One-time enrollment token (96 hex)')),
});
export type EnrollRequest = z.infer<typeof EnrollRequest>;

export const EnrollResponse = z.object({
  api_key: Credential.check(z.describe('Device API key (96 hex); shown only in this response')),
});
export type EnrollResponse = z.infer<typeof EnrollResponse>;

/** Text the server stores in a text column. U+0000 (NUL) is refused: PostgreSQL's text cannot hold it, and both engines answer alike. */
const storedText = (max: number, description: string) =>
  z.string().check(
    z.minLength(1),
    z.maxLength(max),
    z.refine((text) => !text.includes('\u0000'), 'must not contain the character U+0000 (NUL)'),
    z.describe(description),
  );

export const HeartbeatRequest = z.object({
  hardware_uuid: storedText(255, 'Stable hardware identifier, unique among devices of the organization'),
  serial_number: z.optional(storedText(255, 'Hardware serial number')),
  hostname: storedText(255, 'Current device hostname'),
  platform: Platform,
  os_version: storedText(255, 'Human-readable operating-system version'),
  agent_version: storedText(64, 'Version of the reporting agent implementation (not the API version)'),
});
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

/**
 * POST /register (an extension, contract "Extensions beside the spec"): an enrollment secret and
 * the device's identity, the heartbeat's fields. A secret of any other shape is refused like an
 * unknown one (401), so only its type is checked here.
 */
export const RegisterRequest = z.extend(HeartbeatRequest, {
  enroll_secret: z.string().check(z.describe('Enrollment secret: "das_" and 64 hexadecimal characters')),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const RegisterResponse = z.object({
  device_id: z.string().check(z.minLength(1), z.describe('Identifier of the device record created (or kept) for this registration')),
  enrollment_token: Credential.check(z.describe("One-time enrollment token (96 hex) for the spec's /enroll")),
  secret_id: z.string().check(z.minLength(1), z.describe('Identifier of the enrollment secret used (never the secret)')),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

export const HeartbeatResponse = z.object({
  device_id: z.string().check(z.minLength(1), z.describe('Identifier of the enrolled device')),
  heartbeat_interval_seconds: z.int().check(z.describe('Delay between heartbeat requests')),
  posture_interval_seconds: z.int().check(z.describe('Delay between posture collection cycles')),
  server_time: Rfc3339.check(z.describe('Current server time, RFC 3339 UTC')),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/**
 * The server policy extension's field in a heartbeat answer (docs/server.md, "Policy"): the policy
 * the device should apply, as a token to compare with the one it has. A server without the
 * extension never sends it, and the agent keeps its local policy.
 */
export const PolicyVersion = z.string().check(z.minLength(1), z.maxLength(64));

/** The `policy_version` of a policy response: the organization's policy version and the lifecycle data set's. */
export function policyToken(version: number, lifecycleVersion: number): string {
  return `${version}.${lifecycleVersion}`;
}

/** POST EXTENSION_ROUTES.policy's body: the platform whose lifecycle data set the device judges releases by. */
export const PolicyRequest = z.object({ platform: Platform });
export type PolicyRequest = z.infer<typeof PolicyRequest>;

/**
 * POST EXTENSION_ROUTES.policy's answer: the policy (as the administrator wrote it; the agent
 * validates it with checks/policy.ts) and this platform's lifecycle data set (checks/lifecycleTable.ts).
 */
export const PolicyResponse = z.object({
  version: z.int().check(z.nonnegative()),
  policy: z.record(z.string(), z.unknown()),
  lifecycle: z.looseObject({ version: z.int().check(z.nonnegative()) }),
});
export type PolicyResponse = z.infer<typeof PolicyResponse>;

/** POST /device-page (an extension): the device's page, under a one-time code. */
export const DevicePageResponse = z.object({
  url: z.url({ protocol: /^https?$/ }).check(z.describe("The device page's URL with its one-time code")),
  expires_at: Rfc3339.check(z.describe('When the code expires, RFC 3339 UTC')),
});
export type DevicePageResponse = z.infer<typeof DevicePageResponse>;

/**
 * True when no object or array inside `value` sits deeper than `maxDepth` levels (iterative: no
 * stack overflow). Only objects are queued, their depths beside them, and an array's items are
 * read in place: every upload's evidence passes here (src/server/routes/postures.ts), and a pair
 * per value and a copy per array cost two thirds of the check of a 9-result upload.
 */
export function nestsAtMost(value: object, maxDepth: number): boolean {
  const objects: object[] = [value];
  const depths: number[] = [1];
  for (let item = objects.pop(); item !== undefined; item = objects.pop()) {
    const depth = depths.pop() ?? 0;
    if (depth > maxDepth) return false;
    const children: unknown[] = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        objects.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}

export const Evidence = z.record(z.string(), z.unknown()).check(
  z.refine(
    (evidence) => nestsAtMost(evidence, MAX_EVIDENCE_DEPTH),
    `must not nest objects or arrays deeper than ${MAX_EVIDENCE_DEPTH} levels`,
  ),
  z.describe(`Free-form JSON object supporting the result; objects and arrays nest at most ${MAX_EVIDENCE_DEPTH} levels`),
);

export const PostureResult = z.object({
  check_key: storedText(128, 'Stable identifier of the check; the nine official keys are listed in CHECK_KEYS'),
  status: PostureStatus,
  evidence: z.optional(Evidence),
  observed_at: Rfc3339.check(z.describe('Observation time, RFC 3339')),
  correlation_id: z.optional(
    z.string().check(z.minLength(1), z.maxLength(128), z.describe('ID of an existing posture report of the same tenant')),
  ),
});
export type PostureResult = z.infer<typeof PostureResult>;

export const PosturesRequest = z.object({
  results: z
    .array(PostureResult)
    .check(z.maxLength(MAX_RESULTS_PER_REQUEST), z.describe(`Up to ${MAX_RESULTS_PER_REQUEST} posture results; an empty array is a no-op`)),
});
export type PosturesRequest = z.infer<typeof PosturesRequest>;

export const UnenrollRequest = z.object({}).check(z.describe('No request fields are required'));

export const ErrorBody = z.object({
  error: z.enum(ERROR_CODES).check(z.describe('Machine-readable error code')),
  message: z.string().check(z.describe('Human-readable explanation; clients must not depend on its wording')),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
export type ErrorCode = z.infer<typeof ErrorBody>['error'];
