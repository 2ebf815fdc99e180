// Versioned schema migrations, applied in order on every open. The applied version lives in
// `PRAGMA user_version`; each step runs in one IMMEDIATE transaction, so a server and an admin
// command opening the same new database at once cannot both apply it.
import type { Database } from 'better-sqlite3';

interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * Migration SQLite 8 / PostgreSQL 7 (the same statement on both): latest_results.status_since of
 * the rows already there, from the history still held.
 */
export const STATUS_SINCE_BACKFILL = `
      -- Rows already there, from the history still held: the first result after the newest one of
      -- another status (the oldest one kept when retention deleted the change; the latest result's
      -- own time when none is left).
      UPDATE latest_results SET status_since = COALESCE(
        (SELECT r.observed_at FROM posture_results r
         WHERE r.org_id = latest_results.org_id AND r.device_id = latest_results.device_id
           AND r.check_key = latest_results.check_key AND r.id <= latest_results.result_id
           AND r.id > COALESCE(
             (SELECT MAX(o.id) FROM posture_results o
              WHERE o.org_id = latest_results.org_id AND o.device_id = latest_results.device_id
                AND o.check_key = latest_results.check_key AND o.id < latest_results.result_id
                AND o.status <> latest_results.status), 0)
         ORDER BY r.id LIMIT 1),
        observed_at);`;

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'organizations, devices, enrollment tokens, posture reports and results, settings',
    sql: `
      CREATE TABLE organizations (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );

      CREATE TABLE devices (
        id            TEXT PRIMARY KEY,
        org_id        TEXT NOT NULL REFERENCES organizations(id),
        name          TEXT,
        state         TEXT NOT NULL CHECK (state IN ('PENDING', 'ACTIVE', 'REVOKED')),
        api_key_hash  TEXT UNIQUE,
        hardware_uuid TEXT,
        serial_number TEXT,
        hostname      TEXT,
        platform      TEXT,
        os_version    TEXT,
        agent_version TEXT,
        created_at    TEXT NOT NULL,
        enrolled_at   TEXT,
        activated_at  TEXT,
        last_seen_at  TEXT,
        revoked_at    TEXT,
        CHECK ((state = 'REVOKED') = (revoked_at IS NOT NULL)),
        CHECK (state <> 'REVOKED' OR api_key_hash IS NULL)
      );
      CREATE INDEX devices_by_org ON devices(org_id, created_at);
      -- hardware_uuid is unique among the organization's non-revoked devices (spec §2, contract).
      CREATE UNIQUE INDEX devices_hardware_uuid_per_org
        ON devices(org_id, hardware_uuid) WHERE state <> 'REVOKED' AND hardware_uuid IS NOT NULL;

      CREATE TABLE enrollment_tokens (
        token_hash TEXT PRIMARY KEY,
        device_id  TEXT NOT NULL UNIQUE REFERENCES devices(id),
        expires_at TEXT NOT NULL
      );

      CREATE TABLE posture_reports (
        id         TEXT PRIMARY KEY,
        org_id     TEXT NOT NULL REFERENCES organizations(id),
        device_id  TEXT NOT NULL REFERENCES devices(id),
        created_at TEXT NOT NULL
      );

      CREATE TABLE posture_results (
        id          INTEGER PRIMARY KEY,
        org_id      TEXT NOT NULL REFERENCES organizations(id),
        device_id   TEXT NOT NULL REFERENCES devices(id),
        report_id   TEXT NOT NULL REFERENCES posture_reports(id),
        check_key   TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'UNKNOWN', 'NOT_APPLICABLE')),
        evidence    TEXT,
        observed_at TEXT NOT NULL,
        received_at TEXT NOT NULL
      );
      CREATE INDEX posture_results_by_device ON posture_results(org_id, device_id, id);
      CREATE INDEX posture_results_by_report ON posture_results(report_id);

      -- Server-wide settings, e.g. the public URL that \`serve\` announces for \`device create\`.
      CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'indexes for the retention sweep: results and reports by age',
    sql: `
      CREATE INDEX posture_results_by_received_at ON posture_results(received_at);
      CREATE INDEX posture_reports_by_created_at ON posture_reports(created_at);
    `,
  },
  {
    version: 3,
    description: 'admin console and API: latest result per check, device listing indexes, admin tokens, accounts and sessions',
    sql: `
      -- The newest result of each check of each device, kept by recordPostures, so that fleet
      -- filters and summaries never scan the history. Its own copy: retention may delete the row.
      CREATE TABLE latest_results (
        org_id      TEXT NOT NULL REFERENCES organizations(id),
        device_id   TEXT NOT NULL REFERENCES devices(id),
        check_key   TEXT NOT NULL,
        result_id   INTEGER NOT NULL,
        report_id   TEXT NOT NULL,
        status      TEXT NOT NULL,
        evidence    TEXT,
        observed_at TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (device_id, check_key)
      );
      CREATE INDEX latest_results_by_check ON latest_results(org_id, check_key, status, device_id);
      CREATE INDEX latest_results_by_status ON latest_results(status, device_id);
      INSERT INTO latest_results (org_id, device_id, check_key, result_id, report_id, status, evidence, observed_at, received_at)
        SELECT r.org_id, r.device_id, r.check_key, r.id, r.report_id, r.status, r.evidence, r.observed_at, r.received_at
        FROM posture_results r
        WHERE r.id IN (SELECT MAX(id) FROM posture_results GROUP BY device_id, check_key);

      -- Keyset pagination of the device list, per sort order, within one organization or across all.
      CREATE INDEX devices_by_created ON devices(created_at, id);
      CREATE INDEX devices_by_org_created ON devices(org_id, created_at, id);
      CREATE INDEX devices_by_hostname ON devices((COALESCE(hostname, '')), id);
      CREATE INDEX devices_by_org_hostname ON devices(org_id, (COALESCE(hostname, '')), id);
      CREATE INDEX devices_by_last_seen ON devices((COALESCE(last_seen_at, '')), id);
      CREATE INDEX devices_by_org_last_seen ON devices(org_id, (COALESCE(last_seen_at, '')), id);
      DROP INDEX devices_by_org;

      -- Admin API tokens: only their SHA-256 hash; org_id NULL means every organization.
      CREATE TABLE admin_tokens (
        id         TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        org_id     TEXT REFERENCES organizations(id),
        label      TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );

      -- Console accounts: scrypt password hashes; org_id NULL means every organization.
      CREATE TABLE admin_accounts (
        id            TEXT PRIMARY KEY,
        email         TEXT NOT NULL UNIQUE,
        password_hash TEXT NOT NULL,
        org_id        TEXT REFERENCES organizations(id),
        created_at    TEXT NOT NULL
      );

      -- Console sessions, server-side: the cookie holds the secret, this table its SHA-256 hash.
      CREATE TABLE admin_sessions (
        session_hash TEXT PRIMARY KEY,
        account_id   TEXT NOT NULL REFERENCES admin_accounts(id) ON DELETE CASCADE,
        created_at   TEXT NOT NULL,
        expires_at   TEXT NOT NULL
      );
      CREATE INDEX admin_sessions_by_account ON admin_sessions(account_id);
    `,
  },
  {
    version: 4,
    description: 'enrollment secrets, device labels, the links of a re-enrolled or duplicate device',
    sql: `
      -- Reusable enrollment secrets (issue 28): only the SHA-256 of the secret. labels: a JSON object
      -- of strings, given to every device the secret registers. uses counts the devices registered;
      -- max_uses NULL: no cap.
      CREATE TABLE enroll_secrets (
        id          TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL REFERENCES organizations(id),
        secret_hash TEXT NOT NULL UNIQUE,
        labels      TEXT NOT NULL DEFAULT '{}',
        note        TEXT,
        expires_at  TEXT,
        max_uses    INTEGER CHECK (max_uses IS NULL OR max_uses > 0),
        uses        INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0 AND (max_uses IS NULL OR uses <= max_uses)),
        revoked_at  TEXT,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX enroll_secrets_by_org ON enroll_secrets(org_id, created_at);

      -- A device's labels (key=value), given by the secret that registered it; policies target them.
      CREATE TABLE device_labels (
        device_id TEXT NOT NULL REFERENCES devices(id),
        key       TEXT NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (device_id, key)
      );
      CREATE INDEX device_labels_by_label ON device_labels(key, value);

      -- enroll_secret_id: the secret that registered the device. supersedes / superseded_by: a
      -- re-enrolled machine's new record and the REVOKED one it replaced. duplicate_of: another
      -- live record reporting the same hardware_uuid from another host (deviceLifecycle.ts). No
      -- foreign key on these three: migrate-data copies devices in id order, not in link order.
      ALTER TABLE devices ADD COLUMN enroll_secret_id TEXT REFERENCES enroll_secrets(id);
      ALTER TABLE devices ADD COLUMN supersedes TEXT;
      ALTER TABLE devices ADD COLUMN superseded_by TEXT;
      ALTER TABLE devices ADD COLUMN duplicate_of TEXT;
      CREATE INDEX devices_by_enroll_secret ON devices(enroll_secret_id) WHERE enroll_secret_id IS NOT NULL;
      CREATE INDEX devices_by_hardware_uuid ON devices(org_id, hardware_uuid) WHERE hardware_uuid IS NOT NULL;
    `,
  },
  {
    version: 5,
    description: 'server policy: documents per organization and label, their change history, exceptions, lifecycle data sets',
    sql: `
      -- The policy of an organization ('' label) and its refinements per device label ('key=value').
      CREATE TABLE policies (
        org_id   TEXT NOT NULL REFERENCES organizations(id),
        label    TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (org_id, label)
      );
      -- Every change: the organization's policy version is its newest row's.
      CREATE TABLE policy_changes (
        org_id     TEXT NOT NULL REFERENCES organizations(id),
        version    INTEGER NOT NULL,
        label      TEXT NOT NULL,
        document   TEXT,
        previous   TEXT,
        changed_by TEXT NOT NULL,
        changed_at TEXT NOT NULL,
        PRIMARY KEY (org_id, version)
      );
      -- A device's (or a label's) accepted deviation from one check, until it lapses.
      CREATE TABLE policy_exceptions (
        id         TEXT PRIMARY KEY,
        org_id     TEXT NOT NULL REFERENCES organizations(id),
        device_id  TEXT REFERENCES devices(id),
        label      TEXT,
        check_key  TEXT NOT NULL,
        reason     TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        CHECK ((device_id IS NULL) <> (label IS NULL))
      );
      CREATE INDEX policy_exceptions_by_org ON policy_exceptions(org_id, expires_at);
      -- Lifecycle data sets imported by \`lifecycle import\`; the newest is served (none: the built-in one).
      CREATE TABLE lifecycle_sets (
        version     INTEGER PRIMARY KEY,
        data        TEXT NOT NULL,
        imported_by TEXT NOT NULL,
        imported_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    description: 'console sign-in attempts per account, shared by every server process on the database',
    sql: `
      -- By the SHA-256 of the account's normalised email (src/server/console/signInThrottle.ts);
      -- times in epoch milliseconds. Bounded: a new row beyond the cap forgets the least attacked.
      CREATE TABLE sign_in_attempts (
        account_key   TEXT PRIMARY KEY,
        attempts      INTEGER NOT NULL,
        first_at      INTEGER NOT NULL,
        last_at       INTEGER NOT NULL,
        last_address  TEXT NOT NULL,
        blocked_until INTEGER NOT NULL
      );
      CREATE INDEX sign_in_attempts_by_attempts ON sign_in_attempts(attempts, last_at);
    `,
  },
  {
    version: 7,
    description: 'the device page: one-time codes and page sessions, the organization contact',
    sql: `
      -- "My device" (src/server/devicePage.ts): a one-time code the agent obtained (kind 'code') or
      -- the browser session it was exchanged for (kind 'session'), each bound to one device; only
      -- the SHA-256 hash of the secret is stored.
      CREATE TABLE device_page_grants (
        grant_hash TEXT PRIMARY KEY,
        kind       TEXT NOT NULL CHECK (kind IN ('code', 'session')),
        org_id     TEXT NOT NULL REFERENCES organizations(id),
        device_id  TEXT NOT NULL REFERENCES devices(id),
        expires_at TEXT NOT NULL
      );
      CREATE INDEX device_page_grants_by_expiry ON device_page_grants(expires_at);

      -- How a device's user reaches the organization's admin, shown on the device page.
      CREATE TABLE organization_contacts (
        org_id     TEXT PRIMARY KEY REFERENCES organizations(id),
        contact    TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 8,
    description: "when each check's current status began (failing since)",
    sql: `
      -- Kept by recordPostures (src/server/statusSince.ts says the rule); never NULL once written.
      ALTER TABLE latest_results ADD COLUMN status_since TEXT;
      ${STATUS_SINCE_BACKFILL}
    `,
  },
  {
    version: 9,
    description: 'the audit log of admin actions; webhooks, their outbox and the alert marks',
    sql: `
      -- Who did what, when, from where (src/server/audit.ts); never a secret. org_id: the
      -- organization acted on (null: none, e.g. a refused sign-in of an unknown email).
      CREATE TABLE audit_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        actor       TEXT NOT NULL,
        address     TEXT,
        action      TEXT NOT NULL,
        org_id      TEXT REFERENCES organizations(id),
        target_type TEXT,
        target_id   TEXT,
        detail      TEXT
      );
      CREATE INDEX audit_log_by_org ON audit_log(org_id, id);
      CREATE INDEX audit_log_by_action ON audit_log(action, id);
      CREATE INDEX audit_log_by_time ON audit_log(at);

      -- Outgoing webhooks (src/server/webhooks.ts). secret: the HMAC-SHA256 key itself, which
      -- signing needs (shown once at creation; docs/server.md, "Webhooks"). events: comma-separated.
      CREATE TABLE webhooks (
        id               TEXT PRIMARY KEY,
        org_id           TEXT NOT NULL REFERENCES organizations(id),
        url              TEXT NOT NULL,
        format           TEXT NOT NULL CHECK (format IN ('json', 'slack')),
        events           TEXT NOT NULL,
        include_evidence INTEGER NOT NULL,
        secret           TEXT NOT NULL,
        created_by       TEXT NOT NULL,
        created_at       TEXT NOT NULL
      );
      CREATE INDEX webhooks_by_org ON webhooks(org_id);
      -- The outbox: one row per event and webhook, written in the transaction that raised the event,
      -- so a restart loses none; pending rows are sent when next_attempt_at comes (a claim moves it
      -- on first, so another process leaves the row alone), and kept as the delivery log afterwards.
      CREATE TABLE webhook_deliveries (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        webhook_id      TEXT NOT NULL REFERENCES webhooks(id),
        org_id          TEXT NOT NULL REFERENCES organizations(id),
        event_id        TEXT NOT NULL,
        event_type      TEXT NOT NULL,
        device_id       TEXT,
        body            TEXT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts        integer NOT NULL,
        next_attempt_at TEXT,
        last_status     integer,
        last_error      TEXT,
        created_at      TEXT NOT NULL,
        finished_at     TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
      CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, id);
      CREATE INDEX webhook_deliveries_by_org ON webhook_deliveries(org_id, id);
      CREATE INDEX webhook_deliveries_by_time ON webhook_deliveries(created_at);
      -- What the alert sweep has raised: a device's check failing (subject: the check key; since:
      -- when the FAIL began), a device stale or re-enrolled (subject ''). One event per mark: a
      -- mark is inserted (or deleted, for a recovery) in the transaction that queues its deliveries.
      CREATE TABLE alert_marks (
        org_id    TEXT NOT NULL REFERENCES organizations(id),
        device_id TEXT NOT NULL REFERENCES devices(id),
        kind      TEXT NOT NULL CHECK (kind IN ('failing', 'stale', 'reenrolled')),
        subject   TEXT NOT NULL,
        since     TEXT NOT NULL,
        PRIMARY KEY (device_id, kind, subject)
      );
      CREATE INDEX alert_marks_by_org ON alert_marks(org_id, kind);
    `,
  },
  {
    version: 10,
    description: 'console sign-in budgets per client address, shared by every server process on the database',
    sql: `
      -- By the SHA-256 of the client address (src/server/console/signInThrottle.ts): when its budget
      -- is full again, in epoch milliseconds. Bounded: a row full again carries nothing and is
      -- deleted when a new address arrives, so only the addresses of the last minute stay.
      CREATE TABLE sign_in_address_budgets (
        address_key TEXT PRIMARY KEY,
        full_at     REAL NOT NULL
      );
      CREATE INDEX sign_in_address_budgets_by_full_at ON sign_in_address_budgets(full_at);
    `,
  },
  {
    version: 11,
    description: 'the device page: "check again" requests',
    sql: `
      -- A device's user asked from its page for a new check (src/server/checkRequests.ts): the
      -- device's heartbeat answers carry it until it lapses. One row per device, the newest ask.
      CREATE TABLE device_check_requests (
        device_id    TEXT PRIMARY KEY REFERENCES devices(id),
        requested_at TEXT NOT NULL
      );
      CREATE INDEX device_check_requests_by_time ON device_check_requests(requested_at);
    `,
  },
  {
    version: 12,
    description: "labels set by an admin: the organization's policy version at its latest label change",
    sql: `
      -- A change of a device's labels (src/server/deviceLabels.ts) may change which label
      -- refinements it is served: it takes the organization's next policy version, kept here. The
      -- organization's version is the larger of this and its newest policy_changes row's.
      ALTER TABLE organizations ADD COLUMN labels_version INTEGER NOT NULL DEFAULT 0;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.reduce((latest, m) => Math.max(latest, m.version), 0);

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
  constructor(
    readonly found: number,
    known = SCHEMA_VERSION,
  ) {
    super(`the database schema is version ${found}, newer than this program knows (${known}); upgrade device-agent-server`);
  }
}

export function userVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Applies every pending migration (up to `target`: tests build an older schema); returns the versions applied. */
export function migrate(db: Database, target = SCHEMA_VERSION): number[] {
  const applied: number[] = [];
  for (const migration of MIGRATIONS.filter((m) => m.version <= target)) {
    db.transaction(() => {
      const current = userVersion(db);
      if (current > SCHEMA_VERSION) throw new SchemaTooNewError(current);
      if (current >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
      applied.push(migration.version);
    }).immediate();
  }
  return applied;
}
