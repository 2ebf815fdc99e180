// The wire protocol's plain values (routes, limits, enums, header and scheme names), without zod:
// modules that need only these stay light. schemas.ts re-exports them beside the schemas.
export const API_PREFIX = '/api/agent/v1';

export const ROUTES = {
  enroll: `${API_PREFIX}/enroll`,
  heartbeat: `${API_PREFIX}/heartbeat`,
  postures: `${API_PREFIX}/postures`,
  unenroll: `${API_PREFIX}/unenroll`,
} as const;

/** The device page extension (contract, "Extensions beside the spec"): a one-time URL of the device's page. */
export const DEVICE_PAGE_ROUTE = `${API_PREFIX}/device-page`;
export const DEVICE_PAGE_BODY_LIMIT = 16 * 1024;

/** Body limits of the spec, section 8. */
export const BODY_LIMITS = {
  enroll: 16 * 1024,
  heartbeat: 16 * 1024,
  postures: 1024 * 1024,
  unenroll: 16 * 1024,
  /** EXTENSION_ROUTES.policy: `{"platform": …}`. */
  policy: 1024,
  /** The extension route /register (EXTENSION_ROUTES), as /enroll and /heartbeat. */
  register: 16 * 1024,
} as const;

export const MAX_RESULTS_PER_REQUEST = 100;

export const PLATFORMS = ['DARWIN', 'LINUX', 'FREEBSD', 'WINDOWS'] as const;

export const STATUSES = ['PASS', 'FAIL', 'UNKNOWN', 'NOT_APPLICABLE'] as const;

/** The nine official check keys. Servers accept any other non-empty key too. */
export const CHECK_KEYS = [
  'DISK_ENCRYPTION',
  'SCREEN_LOCK',
  'FIREWALL_ENABLED',
  'TIME_SYNC',
  'OS_VERSION',
  'AUTO_UPDATE',
  'PASSWORD_POLICY',
  'REMOTE_LOGIN',
  'MALWARE_PROTECTION',
] as const;

/** Evidence objects nest at most this deep (concise machine-readable fields, spec §2). */
export const MAX_EVIDENCE_DEPTH = 32;

export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'conflict',
  'too_many_requests',
  'internal_error',
  'database_unavailable',
] as const;

/**
 * Response header carrying the posture-report id the server assigned to a /postures request.
 * An extension of the spec (which answers 204 with no body): an agent may pass it back as
 * `correlation_id` so that all batches of one posture cycle land in one report.
 */
export const POSTURE_REPORT_HEADER = 'posture-report-id';

/** The desktop enrollment link scheme of the contract: device-agent://enroll?server=…&token=… */
export const LINK_SCHEME = 'device-agent';

/** Enrollment tokens and device API keys: 96 hexadecimal characters. */
export const CREDENTIAL_PATTERN = /^[0-9a-fA-F]{96}$/;

/**
 * Routes the product adds beside the spec's four (contract, "Extensions beside the spec"). An
 * agent that finds one missing (404) falls back to the spec's flow.
 */
export const EXTENSION_ROUTES = {
  /** An enrollment secret and the device's identity in, a device record and its one-time enrollment token out. */
  register: `${API_PREFIX}/register`,
  /**
   * The server's policy and lifecycle data (docs/server.md, "Policy"): asked only of a server whose
   * heartbeat carries `policy_version`, so a server without it is never asked.
   */
  policy: `${API_PREFIX}/policy`,
  /** A one-time URL of the device's own page (docs/server.md, "My device"). */
  devicePage: DEVICE_PAGE_ROUTE,
} as const;

/**
 * Enrollment secrets: "das_" and 64 hexadecimal characters (256 random bits). The prefix makes one
 * recognisable to secret scanners and in a misplaced file; the server stores its SHA-256 only.
 */
export const ENROLL_SECRET_PATTERN = /^das_[0-9a-fA-F]{64}$/;
