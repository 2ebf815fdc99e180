// The OpenAPI 3.1 document of the Device Agent API, generated from the wire schemas so that it
// cannot drift from what the server enforces. `npm run openapi` writes it to docs/openapi.json.
import * as z from 'zod/mini';
import { ADMIN_PATHS, ADMIN_SCHEMAS, ADMIN_SECURITY_SCHEMES } from '../server/adminOpenapi';
import {
  API_PREFIX,
  BODY_LIMITS,
  DEVICE_PAGE_BODY_LIMIT,
  EnrollRequest,
  EnrollResponse,
  ErrorBody,
  EXTENSION_ROUTES,
  HeartbeatRequest,
  HeartbeatResponse,
  MAX_RESULTS_PER_REQUEST,
  Platform,
  POSTURE_REPORT_HEADER,
  PostureResult,
  PostureStatus,
  PosturesRequest,
  DevicePageResponse,
  RegisterRequest,
  RegisterResponse,
  ROUTES,
  UnenrollRequest,
} from './schemas';

const COMPONENTS = {
  EnrollRequest,
  EnrollResponse,
  HeartbeatRequest,
  HeartbeatResponse,
  Platform,
  PostureStatus,
  PostureResult,
  PosturesRequest,
  UnenrollRequest,
  RegisterRequest,
  RegisterResponse,
  DevicePageResponse,
  Error: ErrorBody,
} as const;
type ComponentName = keyof typeof COMPONENTS;

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: ComponentName, example?: unknown) => ({
  'application/json': { schema: ref(name), ...(example === undefined ? {} : { example }) },
});

/** Example values; a test checks each against its schema. */
export const EXAMPLES = {
  EnrollRequest: { token: '3f'.repeat(48) },
  EnrollResponse: { api_key: 'a9'.repeat(48) },
  HeartbeatRequest: {
    hardware_uuid: '4C4C4544-0035-4810-8057-B7C04F4E3533',
    serial_number: 'C02XK1ABJGH5',
    hostname: 'alice-laptop',
    platform: 'DARWIN',
    os_version: 'macOS 15.1 (24B83)',
    agent_version: '0.1.0',
  },
  HeartbeatResponse: {
    device_id: 'dev_0f6f0c1d2e3a4b5c6d7e8f9012345678',
    heartbeat_interval_seconds: 300,
    posture_interval_seconds: 3600,
    server_time: '2026-01-15T09:30:00.000Z',
  },
  RegisterRequest: {
    enroll_secret: `das_${'5e'.repeat(32)}`,
    hardware_uuid: '4C4C4544-0035-4810-8057-B7C04F4E3533',
    serial_number: 'C02XK1ABJGH5',
    hostname: 'alice-laptop',
    platform: 'DARWIN',
    os_version: 'macOS 15.1 (24B83)',
    agent_version: '0.1.0',
  },
  RegisterResponse: {
    device_id: 'dev_0f6f0c1d2e3a4b5c6d7e8f9012345678',
    enrollment_token: '3f'.repeat(48),
    secret_id: 'ens_9a8b7c6d5e4f30211203f4e5d6c7b8a9',
  },
  PosturesRequest: {
    results: [
      { check_key: 'DISK_ENCRYPTION', status: 'PASS', evidence: { filevault: 'on' }, observed_at: '2026-01-15T09:29:58.120Z' },
      { check_key: 'FIREWALL_ENABLED', status: 'FAIL', evidence: { enabled: false }, observed_at: '2026-01-15T09:29:58.310Z' },
    ],
  },
} as const;

const errorResponse = (description: string, error: string, message: string) => ({
  description,
  content: json('Error', { error, message }),
});

const RESPONSES = {
  BadRequest: errorResponse(
    'Invalid JSON or Content-Type, missing fields, wrong types, invalid enum values, more than 100 results, invalid observed_at or correlation_id, evidence that is not an object',
    'bad_request',
    'invalid request body: platform: Invalid option: expected one of "DARWIN"|"LINUX"|"FREEBSD"|"WINDOWS"',
  ),
  Unauthorized: {
    ...errorResponse(
      'Missing, invalid or revoked API key (or an unknown, used or expired enrollment token)',
      'unauthorized',
      'the API key is not valid: unknown, revoked or unenrolled',
    ),
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
  },
  Conflict: errorResponse(
    'The hardware_uuid is used by another non-revoked device of the organization; the device stays as it was',
    'conflict',
    'the hardware_uuid is already used by another device of this organization',
  ),
  PayloadTooLarge: errorResponse(
    "The body exceeds the route's limit; refused without reading it (clients also accept 400 here)",
    'payload_too_large',
    "the request body exceeds this route's limit of 16384 bytes",
  ),
  InternalError: errorResponse(
    'Unexpected server error; retry with bounded exponential backoff',
    'internal_error',
    'internal server error',
  ),
} as const;
const respond = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  // io "input": objects stay open, because unknown fields are ignored rather than refused.
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
      return [id, rest];
    }),
  );
}

const limit = (bytes: number) => `Body limit ${bytes / 1024} KiB (413 beyond).`;

export function openApiDocument(): Record<string, unknown> {
  const bearer = [{ deviceApiKey: [] }];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Device Agent API',
      version: API_PREFIX.split('/').pop(),
      summary: 'Enrollment, heartbeats, posture results and unenrollment of device posture agents',
      description:
        'Generated from the wire schemas (src/protocol/schemas.ts) by `npm run openapi`. Every route answers 405 with `Allow: POST` to any other method; unknown paths answer 404. Errors use the `Error` body. Unknown JSON fields are ignored. Requests carry `Content-Type: application/json`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'device-agent-server with its default --host and --port' }],
    paths: {
      [ROUTES.enroll]: {
        post: {
          operationId: 'enroll',
          summary: 'Exchange an enrollment token for a device API key',
          description: `The token is single use and expires (7 days by default). The plaintext API key is shown only in this response. ${limit(BODY_LIMITS.enroll)}`,
          security: [],
          'x-body-limit-bytes': BODY_LIMITS.enroll,
          requestBody: { required: true, content: json('EnrollRequest', EXAMPLES.EnrollRequest) },
          responses: {
            200: { description: 'The device API key', content: json('EnrollResponse', EXAMPLES.EnrollResponse) },
            400: respond('BadRequest'),
            401: respond('Unauthorized'),
            413: respond('PayloadTooLarge'),
            500: respond('InternalError'),
          },
        },
      },
      [ROUTES.heartbeat]: {
        post: {
          operationId: 'heartbeat',
          summary: 'Report the device identity; activate a PENDING device; get the schedule',
          description: `The first successful heartbeat moves the device from PENDING to ACTIVE. The intervals are authoritative. ${limit(BODY_LIMITS.heartbeat)}`,
          security: bearer,
          'x-body-limit-bytes': BODY_LIMITS.heartbeat,
          requestBody: { required: true, content: json('HeartbeatRequest', EXAMPLES.HeartbeatRequest) },
          responses: {
            200: { description: 'The reporting schedule', content: json('HeartbeatResponse', EXAMPLES.HeartbeatResponse) },
            400: respond('BadRequest'),
            401: respond('Unauthorized'),
            409: respond('Conflict'),
            413: respond('PayloadTooLarge'),
            500: respond('InternalError'),
          },
        },
      },
      [ROUTES.postures]: {
        post: {
          operationId: 'postures',
          summary: 'Upload a batch of posture results',
          description: `At most ${MAX_RESULTS_PER_REQUEST} results. A PENDING device (no successful heartbeat yet) gets 401. Results without correlation_id share one new posture report; a given correlation_id must name a posture report of the same organization (else 400). observed_at more than 5 minutes in the future is stored as the receive time. ${limit(BODY_LIMITS.postures)}`,
          security: bearer,
          'x-body-limit-bytes': BODY_LIMITS.postures,
          requestBody: { required: true, content: json('PosturesRequest', EXAMPLES.PosturesRequest) },
          responses: {
            204: {
              description: 'Stored (an empty batch is a no-op)',
              headers: {
                [POSTURE_REPORT_HEADER]: {
                  description:
                    'Extension of this server: the posture report created for the results that omitted correlation_id. Pass it as correlation_id to add the next batches of the same cycle to that report. Absent when no report was created.',
                  schema: { type: 'string', pattern: '^rpt_[0-9a-f]{32}$' },
                },
              },
            },
            400: respond('BadRequest'),
            401: respond('Unauthorized'),
            413: respond('PayloadTooLarge'),
            500: respond('InternalError'),
          },
        },
      },
      [ROUTES.unenroll]: {
        post: {
          operationId: 'unenroll',
          summary: "Revoke the calling device's API key",
          description: `No fields are required; the body may be empty. Afterwards every call with the key gets 401. ${limit(BODY_LIMITS.unenroll)}`,
          security: bearer,
          'x-body-limit-bytes': BODY_LIMITS.unenroll,
          requestBody: { required: false, content: json('UnenrollRequest') },
          responses: {
            204: { description: 'The key is revoked' },
            400: respond('BadRequest'),
            401: respond('Unauthorized'),
            413: respond('PayloadTooLarge'),
            500: respond('InternalError'),
          },
        },
      },
      // An extension of this server beside the spec's four routes (contract, "Extensions beside the spec").
      [EXTENSION_ROUTES.register]: {
        post: {
          operationId: 'register',
          summary:
            'Extension: exchange a reusable enrollment secret and the device identity for a device record and its one-time enrollment token',
          description: `Not part of the Device Agent API: an agent that meets 404 here uses a token from an admin instead. The answer's enrollment_token is then exchanged at /enroll as usual (it expires after an hour). A machine registering again with the same hardware_uuid supersedes its old record (revoked, linked); a registration retried before the token was used gets the same device and a new token; the same hardware_uuid from another host while the first is live is recorded as a duplicate (its heartbeats get 409). An unknown, revoked, expired, used-up or malformed secret gets one identical 401. Rate-limited per client address and per secret (429 with Retry-After). ${limit(BODY_LIMITS.register)}`,
          security: [],
          'x-extension': true,
          'x-body-limit-bytes': BODY_LIMITS.register,
          requestBody: { required: true, content: json('RegisterRequest', EXAMPLES.RegisterRequest) },
          responses: {
            200: { description: 'The device record and its one-time token', content: json('RegisterResponse', EXAMPLES.RegisterResponse) },
            400: respond('BadRequest'),
            401: {
              description: 'The enrollment secret is unknown, revoked, expired, used up or malformed (one body for all)',
              content: json('Error', { error: 'unauthorized', message: 'the enrollment secret is not valid' }),
            },
            413: respond('PayloadTooLarge'),
            429: {
              description: 'Too many registrations from this address or with this secret; retry after Retry-After seconds',
              headers: { 'Retry-After': { schema: { type: 'integer' } } },
              content: json('Error'),
            },
            500: respond('InternalError'),
          },
        },
      },
      // The server policy extension (docs/server.md, "Policy"): asked only when a heartbeat answer carries policy_version.
      [EXTENSION_ROUTES.policy]: {
        post: {
          operationId: 'policy',
          summary:
            "Extension: the device's policy and its platform's lifecycle data, when a heartbeat's policy_version differs from the agent's",
          description: `Not part of the Device Agent API: a server with this extension adds \`policy_version\` ("<policy version>.<lifecycle data version>") to each heartbeat answer; a server without it never sends that field, and its agents keep their local policy. ${limit(BODY_LIMITS.policy)}`,
          security: bearer,
          'x-extension': true,
          'x-body-limit-bytes': BODY_LIMITS.policy,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { type: 'object', required: ['platform'], properties: { platform: { enum: [...Platform.options] } } },
              },
            },
          },
          responses: {
            200: {
              description:
                "The organization's policy refined by the device's labels (as set: the agent fills in the defaults), and the lifecycle data set",
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['version', 'policy', 'lifecycle'],
                    properties: {
                      version: { type: 'integer', minimum: 0 },
                      policy: { type: 'object' },
                      lifecycle: {
                        type: 'object',
                        required: ['version', 'dataset', 'sources', 'products'],
                        properties: {
                          version: { type: 'integer', minimum: 0 },
                          dataset: { type: 'object' },
                          sources: { type: 'object' },
                          products: { type: 'object' },
                        },
                      },
                    },
                  },
                },
              },
            },
            400: respond('BadRequest'),
            401: respond('Unauthorized'),
            500: respond('InternalError'),
          },
        },
      },
      // The device page extension (docs/server.md, "The device page"): the user's own device in a browser.
      [EXTENSION_ROUTES.devicePage]: {
        post: {
          operationId: 'devicePage',
          summary: "Extension: a one-time URL of the calling device's own read-only page (My device)",
          description: `Not part of the Device Agent API: an agent that meets 404 or 405 here says the server offers no device page. The URL carries a one-time code that the server exchanges, at the first visit, for a page session bound to this device; it expires within minutes. When the page's user asks for a new check, the device's heartbeat answers carry \`check_requested_at\` (RFC 3339) for 15 minutes: an agent runs a posture cycle and uploads it when the value is new to it. Any body is ignored. ${limit(DEVICE_PAGE_BODY_LIMIT)}`,
          security: bearer,
          'x-extension': true,
          'x-body-limit-bytes': DEVICE_PAGE_BODY_LIMIT,
          responses: {
            200: { description: "The page's one-time URL and when its code expires", content: json('DevicePageResponse') },
            401: respond('Unauthorized'),
            409: {
              description: 'The device has not sent its first heartbeat yet (its page would be empty)',
              content: json('Error', { error: 'conflict', message: 'the device has not sent its first heartbeat yet' }),
            },
            413: respond('PayloadTooLarge'),
            500: respond('InternalError'),
          },
        },
      },
      // The reference server's admin API (not part of the Device Agent API).
      ...ADMIN_PATHS,
    },
    components: {
      schemas: { ...componentSchemas(), ...ADMIN_SCHEMAS },
      responses: RESPONSES,
      securitySchemes: {
        deviceApiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'The device API key (96 hex characters) returned by /enroll',
        },
        ...ADMIN_SECURITY_SCHEMES,
      },
    },
  };
}

/** The file content of docs/openapi.json. */
export function renderOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
