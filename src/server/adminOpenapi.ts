// The admin API's part of docs/openapi.json (paths under /api/admin/v1 and their schemas). The
// shapes are those of admin.ts; test/server/adminApi.test.ts exercises every route described here.
import { CHECK_KEYS, ENROLL_SECRET_PATTERN, PLATFORMS, STATUSES } from '../protocol/constants';
import { MAX_LABELS, MAX_USES } from './enrollSecrets';
import { DEFAULT_PAGE_SIZE, MAX_HISTORY_PAGE, MAX_PAGE_SIZE, MAX_SERIES_DAYS } from './admin';
import { ADMIN_API_PREFIX } from './routes/adminApi';
import { idPattern } from './ids';
import { AUDIT_ACTIONS, MAX_AUDIT_PAGE } from './audit';
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS } from './webhooks';

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonOf = (name: string) => ({ 'application/json': { schema: ref(name) } });
const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const counts = (keys: readonly string[]) => ({
  type: 'object',
  required: [...keys],
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'integer', minimum: 0 }])),
});

export const ADMIN_SCHEMAS: Record<string, unknown> = {
  AdminDevice: {
    type: 'object',
    description: 'A device as the admin API and `device list --json` show it.',
    properties: {
      device_id: { type: 'string', pattern: '^dev_[0-9a-f]{32}$' },
      org: { type: 'string' },
      name: nullable('string'),
      state: { enum: ['PENDING', 'ACTIVE', 'REVOKED'] },
      hardware_uuid: nullable('string'),
      serial_number: nullable('string'),
      hostname: nullable('string'),
      platform: { enum: [...PLATFORMS, null] },
      os_version: nullable('string'),
      agent_version: nullable('string'),
      created_at: { type: 'string', format: 'date-time' },
      enrolled_at: nullable('string', { format: 'date-time' }),
      activated_at: nullable('string', { format: 'date-time' }),
      last_seen_at: nullable('string', { format: 'date-time' }),
      revoked_at: nullable('string', { format: 'date-time' }),
      token_expires_at: nullable('string', { format: 'date-time', description: 'Set while an unused enrollment token exists' }),
      enroll_secret_id: nullable('string', { description: 'The enrollment secret that registered the device (null: created by an admin)' }),
      supersedes: nullable('string', { description: 'Re-enrollment: the REVOKED record this one replaced' }),
      superseded_by: nullable('string', { description: 'Re-enrollment: the record that replaced this one' }),
      duplicate_of: nullable('string', {
        description: 'Another record that reported this one’s hardware_uuid from another host while this one was live (a cloned machine)',
      }),
    },
  },
  AdminCreateSecret: {
    type: 'object',
    required: ['org'],
    additionalProperties: false,
    properties: {
      org: {
        type: 'string',
        description: 'Organization of the devices it registers (created when missing, for an all-organizations credential)',
      },
      expires_in_seconds: { type: 'integer', minimum: 1, description: 'It stops working this long from now (default: never)' },
      max_uses: { type: 'integer', minimum: 1, maximum: MAX_USES, description: 'It registers at most this many devices (default: no cap)' },
      labels: {
        type: 'object',
        maxProperties: MAX_LABELS,
        additionalProperties: { type: 'string' },
        description: 'Labels every device it registers gets, e.g. {"team": "finance"}',
      },
      note: { type: 'string', description: 'What it is for' },
    },
  },
  AdminCreatedSecret: {
    type: 'object',
    description: 'The secret itself appears here only; only its hash is stored.',
    properties: {
      secret_id: { type: 'string', pattern: idPattern('enrollSecret') },
      enroll_secret: { type: 'string', pattern: ENROLL_SECRET_PATTERN.source },
      expires_at: nullable('string', { format: 'date-time' }),
      max_uses: nullable('integer'),
    },
  },
  AdminSecret: {
    type: 'object',
    description: 'An enrollment secret as listed (never the secret).',
    properties: {
      secret_id: { type: 'string', pattern: idPattern('enrollSecret') },
      org: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      note: nullable('string'),
      expires_at: nullable('string', { format: 'date-time' }),
      max_uses: nullable('integer'),
      uses: { type: 'integer', minimum: 0, description: 'Devices registered with it' },
      status: { enum: ['active', 'revoked', 'expired', 'used_up'] },
      revoked_at: nullable('string', { format: 'date-time' }),
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  AdminDeviceListItem: {
    allOf: [
      ref('AdminDevice'),
      {
        type: 'object',
        required: ['failing_checks', 'checks', 'in_grace', 'excepted', 'labels'],
        properties: {
          failing_checks: {
            type: 'integer',
            minimum: 0,
            description:
              'How many checks fail by their latest result (however old), as the compliance summary counts FAIL: past the check’s grace period (the policy’s checks.graceSeconds), no exception covering it',
          },
          checks: {
            type: 'object',
            description:
              'Check key → the status of its latest result (a FAIL in grace or excepted is FAIL here: see in_grace and excepted)',
            additionalProperties: { enum: [...STATUSES] },
          },
          in_grace: {
            type: 'array',
            items: { type: 'string' },
            description: 'The check keys (sorted) whose FAIL is within its grace period, no exception covering it: not failing yet',
          },
          excepted: {
            type: 'array',
            items: { type: 'string' },
            description: 'The check keys (sorted) whose FAIL an exception of the device or of one of its labels covers: not failing',
          },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    ],
  },
  AdminDevicePage: {
    type: 'object',
    required: ['devices', 'next_cursor'],
    properties: {
      devices: { type: 'array', items: ref('AdminDeviceListItem') },
      next_cursor: nullable('string', {
        description: 'Pass as `cursor` (with the same sort and order) for the next page; null on the last page',
      }),
    },
  },
  AdminResult: {
    type: 'object',
    description: 'A stored posture result with what it means and how to fix it (the remediation catalogue; never sent by devices).',
    properties: {
      id: { type: 'integer', description: 'Order of arrival; history pages with `before`' },
      correlation_id: { type: 'string', pattern: '^rpt_[0-9a-f]{32}$' },
      check_key: { type: 'string', examples: [...CHECK_KEYS] },
      status: { enum: [...STATUSES] },
      evidence: nullable('object'),
      observed_at: { type: 'string', format: 'date-time' },
      received_at: { type: 'string', format: 'date-time' },
      remediation: {
        type: 'object',
        properties: {
          word: nullable('string', { description: '`rule` on PASS/FAIL, `reason` otherwise' }),
          summary: { type: 'string' },
          fix: { type: 'string' },
          admin: { type: 'string' },
          generic: { type: 'boolean', description: 'True when the catalogue had no entry for this word' },
        },
      },
      excepted_until: {
        type: 'string',
        format: 'date-time',
        description: 'Set on a FAIL an exception covers (`/exceptions`): the status is still FAIL, shown as excepted until then',
      },
    },
  },
  AdminLatestResult: {
    allOf: [
      ref('AdminResult'),
      {
        type: 'object',
        required: ['status_since', 'failing_since'],
        properties: {
          status_since: {
            type: 'string',
            format: 'date-time',
            description: 'When the current status began: the first observation of it after a different one (observed_at)',
          },
          failing_since: nullable('string', {
            format: 'date-time',
            description: 'status_since while the latest status is FAIL; null when the check does not fail',
          }),
          in_grace_until: {
            type: 'string',
            format: 'date-time',
            description:
              'Present on a FAIL within its grace period (the policy’s checks.graceSeconds): when it starts counting as failing in the overview and webhooks',
          },
        },
      },
    ],
  },
  AdminDeviceView: {
    allOf: [
      ref('AdminDevice'),
      {
        type: 'object',
        properties: {
          latest: { type: 'array', items: ref('AdminLatestResult') },
          labels: {
            type: 'object',
            additionalProperties: { type: 'string' },
            description: 'From its enrollment secret, or set by an admin',
          },
        },
      },
    ],
  },
  AdminSetDeviceLabels: {
    type: 'object',
    required: ['labels'],
    additionalProperties: false,
    properties: {
      labels: {
        type: 'object',
        maxProperties: MAX_LABELS,
        additionalProperties: { type: 'string' },
        description: 'The whole new set, under the rules of an enrollment secret’s labels; {} removes them all',
      },
    },
  },
  AdminDeviceLabels: {
    type: 'object',
    required: ['device_id', 'org', 'labels', 'previous', 'policy_version'],
    properties: {
      device_id: { type: 'string' },
      org: { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      previous: { type: 'object', additionalProperties: { type: 'string' }, description: 'The labels before the change' },
      policy_version: {
        type: 'integer',
        description:
          'The organization’s policy version after the change: a change of labels takes the next one, so the device fetches its policy again',
      },
    },
  },
  AdminHistory: {
    type: 'object',
    properties: {
      device_id: { type: 'string' },
      results: { type: 'array', items: ref('AdminResult'), description: 'Newest first' },
      next_before: nullable('integer', { description: 'Pass as `before` for older results' }),
    },
  },
  AdminStatusChanges: {
    type: 'object',
    properties: {
      device_id: { type: 'string' },
      changes: {
        type: 'array',
        description: 'Newest first: each result whose status differs from the check’s result before it',
        items: {
          allOf: [
            ref('AdminResult'),
            {
              type: 'object',
              properties: { previous_status: nullable('string', { description: 'The status before; null for the check’s first result' }) },
            },
          ],
        },
      },
      next_before: nullable('integer', { description: 'Pass as `before` for older changes' }),
    },
  },
  AdminCreateDevice: {
    type: 'object',
    required: ['org'],
    additionalProperties: false,
    properties: {
      org: { type: 'string', minLength: 1, maxLength: 128, description: 'A token or account of one organization may name only its own' },
      name: { type: 'string', minLength: 1, maxLength: 128 },
      token_ttl_seconds: { type: 'integer', minimum: 1, maximum: 365 * 86_400, default: 7 * 86_400 },
    },
  },
  AdminCreatedDevice: {
    type: 'object',
    description: 'The enrollment token and link are in this response only.',
    properties: {
      device_id: { type: 'string' },
      org: { type: 'string' },
      enrollment_token: { type: 'string', pattern: '^[0-9a-f]{96}$' },
      server_url: { type: 'string' },
      enrollment_link: { type: 'string' },
      token_expires_at: { type: 'string', format: 'date-time' },
    },
  },
  AdminComplianceSummary: {
    type: 'object',
    properties: {
      org: nullable('string'),
      generated_at: { type: 'string', format: 'date-time' },
      devices: {
        type: 'object',
        properties: {
          total: { type: 'integer' },
          by_state: counts(['PENDING', 'ACTIVE', 'REVOKED']),
          by_platform: { type: 'object', additionalProperties: { type: 'integer' } },
        },
      },
      presence: {
        type: 'object',
        description:
          'ACTIVE devices; stale: not seen for twice the heartbeat interval; offline: not seen for offline_after_seconds. The cutoffs used: `GET /devices?state=ACTIVE&last_seen_before=<stale_before>` lists exactly the stale ones',
        properties: {
          ...Object.fromEntries(
            ['active', 'stale', 'offline', 'stale_after_seconds', 'offline_after_seconds'].map((k) => [k, { type: 'integer' }]),
          ),
          stale_before: { type: 'string', format: 'date-time' },
          offline_before: { type: 'string', format: 'date-time' },
        },
      },
      results_stale_before: {
        type: 'string',
        format: 'date-time',
        description: 'A latest result received before this (twice the posture interval ago) is stale',
      },
      agent_versions: {
        type: 'array',
        description: 'ACTIVE devices per agent version, most first',
        items: { type: 'object', properties: { agent_version: nullable('string'), devices: { type: 'integer' } } },
      },
      os_releases: {
        type: 'array',
        description: 'ACTIVE devices per platform and OS version, most first',
        items: {
          type: 'object',
          properties: { platform: nullable('string'), os_version: nullable('string'), devices: { type: 'integer' } },
        },
      },
      checks: {
        type: 'array',
        description:
          'Per check, ACTIVE devices by the status of their latest result, however old (a stale result keeps its last known status). EXCEPTED: a FAIL an exception of the device or its labels covers (not in FAIL); IN_GRACE: a FAIL not excepted still within its check’s grace period (the policy’s checks.graceSeconds): not failing yet, not notified, not in FAIL; MISSING: no result; STALE: of those counted, the results received before results_stale_before. Each count is the length of one device list: `check=<key>&status=<status>` (FAIL and IN_GRACE: `&excepted=false`; EXCEPTED: `status=FAIL&excepted=true`; MISSING: `status=MISSING`; STALE: `result_before=<results_stale_before>`), with `state=ACTIVE`',
        items: {
          allOf: [
            { type: 'object', properties: { check_key: { type: 'string' } } },
            counts([...STATUSES, 'EXCEPTED', 'MISSING', 'STALE', 'IN_GRACE']),
          ],
        },
      },
    },
  },
  AdminComplianceSeries: {
    type: 'object',
    properties: {
      org: nullable('string'),
      days: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            day: { type: 'string', format: 'date' },
            checks: {
              type: 'object',
              additionalProperties: counts(STATUSES),
              description: 'Per check: devices whose last result of that day had each status',
            },
            pass_ratio: nullable('number', { description: 'PASS / (PASS + FAIL + UNKNOWN) over every check that day' }),
          },
        },
      },
    },
  },
  AdminPolicy: {
    type: 'object',
    description:
      "An organization's policy (or a label's refinement): as set, and every setting with the defaults filled in (docs/checks.md).",
    required: ['org', 'version', 'label', 'document', 'effective', 'labels'],
    properties: {
      org: { type: 'string' },
      version: { type: 'integer', minimum: 0, description: "The organization's policy version; 0 before any change" },
      label: nullable('string', { description: 'A device label, key=value; null for the organization' }),
      document: { type: 'object', description: 'The settings as set (only those that differ from the defaults)' },
      effective: { type: 'object', description: 'Every setting' },
      labels: { type: 'array', items: { type: 'string' }, description: 'Labels with a refinement of their own' },
    },
  },
  AdminPolicySet: {
    type: 'object',
    required: ['org', 'label', 'version'],
    properties: { org: { type: 'string' }, label: nullable('string'), version: { type: 'integer', minimum: 1 } },
  },
  AdminPolicyHistory: {
    type: 'object',
    required: ['changes'],
    properties: {
      changes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['version', 'label', 'changed_by', 'changed_at', 'changed', 'removed', 'document'],
          properties: {
            version: { type: 'integer', minimum: 1 },
            label: nullable('string'),
            changed_by: { type: 'string', description: '`token:<id>`, `account:<email>` or `cli:<user>`' },
            changed_at: { type: 'string', format: 'date-time' },
            changed: { type: 'array', items: { type: 'string' }, description: 'The settings (dotted paths) that changed' },
            removed: { type: 'boolean' },
            document: nullable('object'),
          },
        },
      },
    },
  },
  AdminException: {
    type: 'object',
    description:
      "One check's FAIL accepted on a device (or every device with a label) until `expires_at`; the agent still reports the true status.",
    required: ['exception_id', 'org', 'device_id', 'label', 'check_key', 'reason', 'expires_at', 'created_by', 'created_at'],
    properties: {
      exception_id: { type: 'string', pattern: idPattern('policyException') },
      org: { type: 'string' },
      device_id: nullable('string'),
      label: nullable('string'),
      check_key: { type: 'string', examples: [...CHECK_KEYS] },
      reason: { type: 'string' },
      expires_at: { type: 'string', format: 'date-time' },
      created_by: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  AdminFailures: {
    type: 'object',
    properties: {
      failures: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            platform: { type: 'string' },
            check_key: { type: 'string' },
            word: nullable('string'),
            devices: { type: 'array', items: { type: 'string' } },
            hostnames: { type: 'array', items: nullable('string'), description: 'Each device’s hostname, in the order of devices' },
            summary: { type: 'string' },
            admin: { type: 'string' },
            generic: { type: 'boolean' },
          },
        },
      },
    },
  },
  AdminWebhook: {
    type: 'object',
    description: 'A webhook as listed (never its secret; the URL’s path elided: a Slack URL’s path is itself a secret)',
    properties: {
      webhook_id: { type: 'string', pattern: idPattern('webhook') },
      org: { type: 'string' },
      url: { type: 'string', description: 'The origin, and "/…" when the URL has a path' },
      format: { enum: [...WEBHOOK_FORMATS] },
      events: { type: 'array', items: { enum: [...WEBHOOK_EVENTS] } },
      include_evidence: { type: 'boolean' },
      created_by: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  AdminWebhookDelivery: {
    type: 'object',
    description: 'One event sent (or being sent) to one webhook: the delivery log',
    properties: {
      delivery_id: { type: 'integer' },
      webhook_id: { type: 'string' },
      event_id: { type: 'string', description: 'The event’s id, also X-Device-Agent-Delivery: the same on every attempt' },
      event_type: { enum: [...WEBHOOK_EVENTS] },
      device_id: nullable('string'),
      state: { enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'integer', minimum: 0 },
      next_attempt_at: nullable('string', { format: 'date-time' }),
      last_status: nullable('integer', { description: 'The receiver’s last HTTP status (null: no answer)' }),
      last_error: nullable('string'),
      created_at: { type: 'string', format: 'date-time' },
      finished_at: nullable('string', { format: 'date-time' }),
    },
  },
  AdminAuditPage: {
    type: 'object',
    required: ['entries', 'next_before'],
    properties: {
      entries: {
        type: 'array',
        items: {
          type: 'object',
          description: 'One admin action (src/server/audit.ts); never a secret',
          properties: {
            id: { type: 'integer', description: 'Order of recording; pages with `before`' },
            at: { type: 'string', format: 'date-time' },
            actor: {
              type: 'string',
              description: '`account:<email>`, `token:<id>`, `cli:<user>`, or `unknown` (a refused sign-in of no account)',
            },
            address: nullable('string', {
              description: 'The client address (X-Forwarded-For’s behind a --trust-proxy proxy); null from the CLI',
            }),
            action: { enum: [...AUDIT_ACTIONS] },
            org: nullable('string'),
            target_type: nullable('string'),
            target_id: nullable('string'),
            detail: nullable('object', { description: 'Ids, counts and outcomes of the action' }),
          },
        },
      },
      next_before: nullable('integer', { description: 'Pass as `before` for older entries; null on the last page' }),
    },
  },
};

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const deviceIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A device id; a value not of this form names no device (404)',
  schema: { type: 'string', pattern: idPattern('device') },
};
const ERRORS = {
  400: error('A bad parameter or body (`bad_request`)'),
  401: error('No, a malformed, unknown or revoked admin token, and no console session (`unauthorized`)'),
  403: error('A console-session request that changes something without its CSRF token in `x-csrf-token` (`forbidden`)'),
  404: error(
    'No such device or organization, an id not of a device id’s form, or not within the credential’s organization (`not_found`): answered alike',
  ),
};
const security = [{ adminToken: [] }, { consoleSession: [] }];
/** `format=csv`: a download for an auditor (src/server/csv.ts: about lines, formula cells made text). */
const csvFormatQuery = (what: string) =>
  query(
    'format',
    `json (default) or csv: ${what}, as RFC 4180 CSV after # lines naming the organization, filters and export time; cells a spreadsheet would evaluate start with an apostrophe`,
    { enum: ['json', 'csv'] },
  );
const CSV = { 'text/csv': { schema: { type: 'string' } } };
const orgQuery = query('org', 'One organization by name (must be within the credential’s reach)');
const labelQuery = query('label', 'A device label (key=value): its refinement of the organization’s policy');

const orgPathParameter = { name: 'org', in: 'path', required: true, schema: { type: 'string' }, description: 'Organization name' };
const CONTACT = {
  'application/json': {
    schema: {
      type: 'object',
      properties: { org: { type: 'string' }, contact: { type: ['string', 'null'] } },
      required: ['org', 'contact'],
    },
  },
};

export const ADMIN_PATHS: Record<string, unknown> = {
  [`${ADMIN_API_PREFIX}/devices`]: {
    get: {
      operationId: 'adminListDevices',
      summary: 'List devices, filtered, one page at a time (keyset pagination)',
      security,
      parameters: [
        orgQuery,
        query('state', 'PENDING, ACTIVE or REVOKED'),
        query('platform', `${PLATFORMS.join(', ')}, or UNKNOWN (none reported yet: no heartbeat)`),
        query('failing', 'A check key that fails (its latest result FAIL past its grace period, not excepted), or `any`'),
        query('hostname', 'A substring of the hostname (case-insensitive)'),
        query('last_seen_before', 'ISO 8601 date or time', { type: 'string', format: 'date-time' }),
        query('last_seen_after', 'ISO 8601 date or time', { type: 'string', format: 'date-time' }),
        query('check', 'A check key: the filters status, result_before, rule and excepted apply to its latest result'),
        query(
          'status',
          'With check: the status of its latest result, or MISSING (none). FAIL: failing past its grace period (or excepted); IN_GRACE: a FAIL no exception covers still within its check’s grace period (the policy’s checks.graceSeconds)',
          { enum: [...STATUSES, 'IN_GRACE', 'MISSING'] },
        ),
        query('result_before', 'With check: its latest result was received before this time (stale)', {
          type: 'string',
          format: 'date-time',
        }),
        query('rule', 'With check: the `rule` of its latest result’s evidence'),
        query('excepted', 'With check: a FAIL an exception covers (true) or not (false)', { enum: ['true', 'false'] }),
        query('agent_version', 'The agent version the device runs'),
        query('os_version', 'The OS version the device reports'),
        query('label', 'A label the device carries, key=value'),
        query('min_failing', 'At least this many failing checks (as failing_checks counts)', { type: 'integer', minimum: 1 }),
        query(
          'sort',
          'created_at (default), hostname, last_seen_at, failing_checks or agent_version (in version order: 1.10.0 after 1.9.0, a prerelease such as 1.10.0-rc.1 before its release)',
          {
            enum: ['created_at', 'hostname', 'last_seen_at', 'failing_checks', 'agent_version'],
          },
        ),
        query('order', 'asc (default) or desc', { enum: ['asc', 'desc'] }),
        query('cursor', 'next_cursor of the previous page'),
        query('limit', 'Page size', { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
        csvFormatQuery('every matching device (no cursor or limit)'),
      ],
      responses: {
        200: {
          description: 'A page of devices, or with format=csv every matching device',
          content: { ...jsonOf('AdminDevicePage'), ...CSV },
        },
        400: ERRORS[400],
        401: ERRORS[401],
      },
    },
    post: {
      operationId: 'adminCreateDevice',
      summary: 'Create a PENDING device and its single-use enrollment token',
      security,
      requestBody: { required: true, content: jsonOf('AdminCreateDevice') },
      responses: {
        201: { description: 'The device, with its token and link (shown once)', content: jsonOf('AdminCreatedDevice') },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/devices/{id}`]: {
    get: {
      operationId: 'adminGetDevice',
      summary: 'A device with the latest result of each check and its remediation',
      security,
      parameters: [deviceIdParameter],
      responses: {
        200: { description: 'The device', content: jsonOf('AdminDeviceView') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/devices/{id}/history`]: {
    get: {
      operationId: 'adminDeviceHistory',
      summary: 'The device’s posture results, newest first',
      security,
      parameters: [
        deviceIdParameter,
        query('check', 'Only this check'),
        query('before', 'Results with an id below this (next_before of the previous page)', { type: 'integer' }),
        query('limit', 'Page size', { type: 'integer', minimum: 1, maximum: MAX_HISTORY_PAGE, default: 100 }),
        csvFormatQuery('the whole history, without evidence (no before or limit)'),
      ],
      responses: {
        200: { description: 'A page of results, or with format=csv every result', content: { ...jsonOf('AdminHistory'), ...CSV } },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/devices/{id}/changes`]: {
    get: {
      operationId: 'adminDeviceStatusChanges',
      summary:
        'The device’s history as status changes, newest first (observed_at: when the new status was first observed); the raw log is /history',
      security,
      parameters: [
        deviceIdParameter,
        query('check', 'Only this check'),
        query('before', 'Changes with a result id below this (next_before of the previous page)', { type: 'integer' }),
        query('limit', 'Page size', { type: 'integer', minimum: 1, maximum: MAX_HISTORY_PAGE, default: 100 }),
      ],
      responses: {
        200: { description: 'A page of status changes', content: jsonOf('AdminStatusChanges') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/devices/{id}/revoke`]: {
    post: {
      operationId: 'adminRevokeDevice',
      summary: 'Revoke a device: its API key and any unused enrollment token stop working',
      security,
      parameters: [deviceIdParameter],
      responses: {
        200: {
          description: 'Revoked now, or already',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { device_id: { type: 'string' }, outcome: { enum: ['revoked', 'already_revoked'] } } },
            },
          },
        },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/devices/{id}/labels`]: {
    put: {
      operationId: 'adminSetDeviceLabels',
      summary:
        'Replace a device’s labels (label refinements of the policy and label exceptions target them); a change takes the organization’s next policy version. Audited (device.labels)',
      security,
      parameters: [deviceIdParameter],
      requestBody: { required: true, content: jsonOf('AdminSetDeviceLabels') },
      responses: {
        200: { description: 'The labels now, and before', content: jsonOf('AdminDeviceLabels') },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/enroll-secrets`]: {
    get: {
      operationId: 'adminListEnrollSecrets',
      summary: 'Enrollment secrets with their use counts, oldest first (never the secrets themselves)',
      security,
      parameters: [orgQuery],
      responses: {
        200: {
          description: 'The secrets',
          content: {
            'application/json': { schema: { type: 'object', properties: { secrets: { type: 'array', items: ref('AdminSecret') } } } },
          },
        },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
    post: {
      operationId: 'adminCreateEnrollSecret',
      summary: 'Create a reusable enrollment secret for managed installs (POST /api/agent/v1/register)',
      security,
      requestBody: { required: true, content: jsonOf('AdminCreateSecret') },
      responses: {
        201: { description: 'The secret (shown once)', content: jsonOf('AdminCreatedSecret') },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/enroll-secrets/{id}`]: {
    delete: {
      operationId: 'adminRevokeEnrollSecret',
      summary: 'Revoke an enrollment secret: it registers no device from now on (devices it registered stay)',
      security,
      parameters: [
        {
          name: 'id',
          in: 'path',
          required: true,
          description: 'A secret id; a value not of this form names no secret (404)',
          schema: { type: 'string', pattern: idPattern('enrollSecret') },
        },
      ],
      responses: {
        200: {
          description: 'Revoked now, or already',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { secret_id: { type: 'string' }, outcome: { enum: ['revoked', 'already_revoked'] } } },
            },
          },
        },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/compliance`]: {
    get: {
      operationId: 'adminComplianceSummary',
      summary: 'Devices by state and platform; per check, devices by the status of their latest result',
      security,
      parameters: [orgQuery],
      responses: {
        200: { description: 'The summary', content: jsonOf('AdminComplianceSummary') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/compliance/daily`]: {
    get: {
      operationId: 'adminComplianceSeries',
      summary: 'The same per day (UTC), oldest first, for a chart',
      security,
      parameters: [
        orgQuery,
        query('days', "How many days, today included; fewer when days before today began before the server's --retention ago", {
          type: 'integer',
          minimum: 1,
          maximum: MAX_SERIES_DAYS,
          default: 30,
        }),
      ],
      responses: {
        200: { description: 'One entry per day', content: jsonOf('AdminComplianceSeries') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/policy`]: {
    get: {
      operationId: 'adminPolicyShow',
      summary: "An organization's policy, or a label's refinement of it",
      security,
      parameters: [{ ...orgQuery, required: true }, labelQuery],
      responses: {
        200: { description: 'The policy', content: jsonOf('AdminPolicy') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
    put: {
      operationId: 'adminPolicySet',
      summary: "Replaces an organization's policy (or a label's refinement); an invalid one is refused and nothing is stored",
      security,
      parameters: [{ ...orgQuery, required: true }, labelQuery],
      requestBody: {
        required: true,
        description: 'The settings that differ from the defaults (docs/checks.md, "Policy"); an unknown setting is refused',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
      responses: {
        200: { description: 'Stored: the new version', content: jsonOf('AdminPolicySet') },
        400: error('Invalid policy: the message names the setting (a dotted path) and why'),
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/policy/history`]: {
    get: {
      operationId: 'adminPolicyHistory',
      summary: "An organization's policy changes, newest first: who, when, which settings",
      security,
      parameters: [
        { ...orgQuery, required: true },
        labelQuery,
        query('limit', 'At most this many changes', { type: 'integer', minimum: 1, maximum: 1000, default: 50 }),
      ],
      responses: {
        200: { description: 'The changes', content: jsonOf('AdminPolicyHistory') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/exceptions`]: {
    get: {
      operationId: 'adminExceptionList',
      summary: "An organization's exceptions that have not lapsed, soonest to end first",
      security,
      parameters: [{ ...orgQuery, required: true }],
      responses: {
        200: {
          description: 'The exceptions',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['exceptions'],
                properties: { exceptions: { type: 'array', items: ref('AdminException') } },
              },
            },
          },
        },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
    post: {
      operationId: 'adminExceptionGrant',
      summary: 'Grants an exception for one check of one device (device_id) or of every device with a label; it lapses by itself',
      security,
      parameters: [{ ...orgQuery, required: true }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['check_key', 'reason', 'expires'],
              properties: {
                device_id: { type: 'string' },
                label: { type: 'string', description: 'key=value' },
                check_key: { type: 'string' },
                reason: { type: 'string', maxLength: 500 },
                expires: { type: 'string', description: 'An ISO 8601 date or time, or a duration such as 30d; at most a year away' },
              },
            },
          },
        },
      },
      responses: {
        201: { description: 'Granted', content: jsonOf('AdminException') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/exceptions/{id}`]: {
    delete: {
      operationId: 'adminExceptionRemove',
      summary: 'Ends an exception now',
      security,
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { ...orgQuery, required: true },
      ],
      responses: { 204: { description: 'Removed' }, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404] },
    },
  },
  [`${ADMIN_API_PREFIX}/failures`]: {
    get: {
      operationId: 'adminFleetFailures',
      summary: 'Which ACTIVE devices fail which check (latest results), with the fleet-wide fix',
      security,
      parameters: [orgQuery],
      responses: {
        200: { description: 'Failures, most devices first', content: jsonOf('AdminFailures') },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/organizations/{org}/contact`]: {
    get: {
      operationId: 'adminOrganizationContact',
      summary: "How the organization's device users reach their admin, as the device page (My device) shows it",
      security,
      parameters: [orgPathParameter],
      responses: { 200: { description: 'The contact, or null', content: CONTACT }, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404] },
    },
    put: {
      operationId: 'adminSetOrganizationContact',
      summary: 'Set the contact (one printable line, at most 256 characters), or remove it with null',
      security,
      parameters: [orgPathParameter],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: { type: 'object', required: ['contact'], properties: { contact: { type: ['string', 'null'] } } } },
        },
      },
      responses: { 200: { description: 'The contact as stored', content: CONTACT }, ...ERRORS },
    },
  },
  [`${ADMIN_API_PREFIX}/webhooks`]: {
    get: {
      operationId: 'adminListWebhooks',
      summary: 'The webhooks within the credential’s reach, oldest first',
      security,
      parameters: [orgQuery],
      responses: {
        200: {
          description: 'The webhooks',
          content: {
            'application/json': { schema: { type: 'object', properties: { webhooks: { type: 'array', items: ref('AdminWebhook') } } } },
          },
        },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
    post: {
      operationId: 'adminCreateWebhook',
      summary: 'Add a webhook: events are POSTed to its URL, signed with its secret (docs/server.md, "Webhooks")',
      security,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['org', 'url'],
              additionalProperties: false,
              properties: {
                org: { type: 'string' },
                url: { type: 'string', format: 'uri', description: 'http or https, no credentials' },
                format: {
                  enum: [...WEBHOOK_FORMATS],
                  default: 'json',
                  description: 'json: the event object; slack: {"text"} for an incoming webhook',
                },
                events: { type: 'array', items: { enum: [...WEBHOOK_EVENTS] }, description: 'Default: all' },
                include_evidence: { type: 'boolean', default: false, description: 'Send the check’s evidence in check events' },
              },
            },
          },
        },
      },
      responses: {
        201: {
          description: 'The webhook, with its signing secret (shown once)',
          content: {
            'application/json': {
              schema: {
                allOf: [
                  ref('AdminWebhook'),
                  { type: 'object', properties: { secret: { type: 'string', pattern: '^whsec_[0-9a-f]{64}$' } } },
                ],
              },
            },
          },
        },
        ...ERRORS,
      },
    },
  },
  [`${ADMIN_API_PREFIX}/webhooks/{id}`]: {
    delete: {
      operationId: 'adminDeleteWebhook',
      summary: 'Delete a webhook and its delivery log; events not yet delivered are dropped',
      security,
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: idPattern('webhook') } }],
      responses: { 200: { description: 'Deleted' }, ...ERRORS },
    },
  },
  [`${ADMIN_API_PREFIX}/webhooks/{id}/deliveries`]: {
    get: {
      operationId: 'adminWebhookDeliveries',
      summary: 'The webhook’s delivery log, newest first (the last 100)',
      security,
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: idPattern('webhook') } }],
      responses: {
        200: {
          description: 'The deliveries',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { deliveries: { type: 'array', items: ref('AdminWebhookDelivery') } } },
            },
          },
        },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
  [`${ADMIN_API_PREFIX}/audit`]: {
    get: {
      operationId: 'adminAuditLog',
      summary: 'The audit log: admin actions newest first (within the credential’s organization), kept per --retention',
      security,
      parameters: [
        orgQuery,
        query('action', 'Only this action', { enum: [...AUDIT_ACTIONS] }),
        query('before', 'Entries with an id below this (next_before of the previous page)', { type: 'integer' }),
        query('limit', 'Page size', { type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE, default: 100 }),
        csvFormatQuery('every matching entry (no before or limit)'),
      ],
      responses: {
        200: { description: 'A page of entries, or with format=csv every entry', content: { ...jsonOf('AdminAuditPage'), ...CSV } },
        400: ERRORS[400],
        401: ERRORS[401],
        404: ERRORS[404],
      },
    },
  },
};

export const ADMIN_SECURITY_SCHEMES = {
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'An admin API token (`dat_` and 96 hex) from `device-agent-server token create`',
  },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'device_agent_session',
    description: 'The console session; changes also need `x-csrf-token`',
  },
};
