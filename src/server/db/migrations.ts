// Versioned schema migrations, applied in order on every open. The applied version lives in
// `PRAGMA user_version`; each step runs in one IMMEDIATE transaction, so a server and an admin
// command opening the same new database at once cannot both apply it.
import type { Database } from 'better-sqlite3';

interface Migration {
  version: number;
  description: string;
  sql: string;
}

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

/** Applies every pending migration; returns the versions applied. */
export function migrate(db: Database): number[] {
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
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
