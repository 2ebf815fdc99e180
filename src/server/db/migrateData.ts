// `device-agent-server migrate-data --from <sqlite file> --to postgres://…`: copies a SQLite
// deployment (organizations, enrollment secrets' hashes, devices with their keys' hashes and labels, unused enrollment tokens, posture
// reports and results, latest results, admin tokens, console accounts, sessions and sign-in attempts, settings, the audit log, webhooks and their deliveries) into a PostgreSQL database, then compares the row counts of every
// table. Each batch is one transaction whose rows are inserted with ON CONFLICT DO NOTHING, so an
// interrupted copy is resumed by running the same command again; posture results keep their ids,
// and a rerun starts after the highest one already copied.
import type { Database } from 'better-sqlite3';
import type { Pool } from 'pg';
import { openDatabase } from './open';
import { connectPostgres, type PostgresOptions } from './postgresOpen';

const BATCH_ROWS = 1_000;

interface TableCopy {
  table: string;
  /** Key the copy pages by (unique, ordered the same in both engines). */
  key: string;
  /** Columns with the PostgreSQL array type each is sent as. */
  columns: readonly (readonly [name: string, pgArrayType: string])[];
}

// In foreign-key order: a row's references are copied before it.
const TABLES: readonly TableCopy[] = [
  {
    table: 'organizations',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['name', 'text[]'],
      ['created_at', 'timestamptz[]'],
      ['labels_version', 'integer[]'],
    ],
  },
  {
    table: 'enroll_secrets',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['org_id', 'text[]'],
      ['secret_hash', 'text[]'],
      ['labels', 'jsonb[]'],
      ['note', 'text[]'],
      ['expires_at', 'timestamptz[]'],
      ['max_uses', 'integer[]'],
      ['uses', 'integer[]'],
      ['revoked_at', 'timestamptz[]'],
      ['created_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'devices',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['org_id', 'text[]'],
      ['name', 'text[]'],
      ['state', 'text[]'],
      ['api_key_hash', 'text[]'],
      ['hardware_uuid', 'text[]'],
      ['serial_number', 'text[]'],
      ['hostname', 'text[]'],
      ['platform', 'text[]'],
      ['os_version', 'text[]'],
      ['agent_version', 'text[]'],
      ['created_at', 'timestamptz[]'],
      ['enrolled_at', 'timestamptz[]'],
      ['activated_at', 'timestamptz[]'],
      ['last_seen_at', 'timestamptz[]'],
      ['revoked_at', 'timestamptz[]'],
      ['enroll_secret_id', 'text[]'],
      ['supersedes', 'text[]'],
      ['superseded_by', 'text[]'],
      ['duplicate_of', 'text[]'],
    ],
  },
  {
    // Its primary key has two columns: paged by SQLite's rowid, which is not copied.
    table: 'device_labels',
    key: 'rowid',
    columns: [
      ['device_id', 'text[]'],
      ['key', 'text[]'],
      ['value', 'text[]'],
    ],
  },
  {
    table: 'enrollment_tokens',
    key: 'token_hash',
    columns: [
      ['token_hash', 'text[]'],
      ['device_id', 'text[]'],
      ['expires_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'posture_reports',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['org_id', 'text[]'],
      ['device_id', 'text[]'],
      ['created_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'posture_results',
    key: 'id',
    columns: [
      ['id', 'bigint[]'],
      ['org_id', 'text[]'],
      ['device_id', 'text[]'],
      ['report_id', 'text[]'],
      ['check_key', 'text[]'],
      ['status', 'text[]'],
      ['evidence', 'json[]'],
      ['observed_at', 'text[]'],
      ['received_at', 'timestamptz[]'],
    ],
  },
  {
    // Copied rather than rebuilt: as of the same moment as the results, and it keeps a check's
    // latest result whose history row retention already deleted. result_id is unique.
    table: 'latest_results',
    key: 'result_id',
    columns: [
      ['org_id', 'text[]'],
      ['device_id', 'text[]'],
      ['check_key', 'text[]'],
      ['result_id', 'bigint[]'],
      ['report_id', 'text[]'],
      ['status', 'text[]'],
      ['evidence', 'json[]'],
      ['observed_at', 'text[]'],
      ['received_at', 'timestamptz[]'],
      ['status_since', 'text[]'],
    ],
  },
  {
    table: 'admin_tokens',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['token_hash', 'text[]'],
      ['org_id', 'text[]'],
      ['label', 'text[]'],
      ['created_at', 'timestamptz[]'],
      ['revoked_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'admin_accounts',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['email', 'text[]'],
      ['password_hash', 'text[]'],
      ['org_id', 'text[]'],
      ['created_at', 'timestamptz[]'],
    ],
  },
  {
    // Console sessions too, so that signed-in admins stay signed in across the move.
    table: 'admin_sessions',
    key: 'session_hash',
    columns: [
      ['session_hash', 'text[]'],
      ['account_id', 'text[]'],
      ['created_at', 'timestamptz[]'],
      ['expires_at', 'timestamptz[]'],
    ],
  },
  {
    // The per-account sign-in counts, so that a move does not hand an attacker a fresh budget (the
    // per-address budgets, sign_in_address_budgets, last a minute and are not copied).
    table: 'sign_in_attempts',
    key: 'account_key',
    columns: [
      ['account_key', 'text[]'],
      ['attempts', 'integer[]'],
      ['first_at', 'bigint[]'],
      ['last_at', 'bigint[]'],
      ['last_address', 'text[]'],
      ['blocked_until', 'bigint[]'],
    ],
  },
  {
    // The device page's contact (device page codes and sessions last minutes and are not copied).
    table: 'organization_contacts',
    key: 'org_id',
    columns: [
      ['org_id', 'text[]'],
      ['contact', 'text[]'],
      ['updated_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'settings',
    key: 'key',
    columns: [
      ['key', 'text[]'],
      ['value', 'text[]'],
    ],
  },
  // The server policy (src/server/policy.ts): documents, their history, exceptions, lifecycle data sets.
  {
    table: 'policies',
    key: 'rowid',
    columns: [
      ['org_id', 'text[]'],
      ['label', 'text[]'],
      ['document', 'text[]'],
    ],
  },
  {
    table: 'policy_changes',
    key: 'rowid',
    columns: [
      ['org_id', 'text[]'],
      ['version', 'integer[]'],
      ['label', 'text[]'],
      ['document', 'text[]'],
      ['previous', 'text[]'],
      ['changed_by', 'text[]'],
      ['changed_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'policy_exceptions',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['org_id', 'text[]'],
      ['device_id', 'text[]'],
      ['label', 'text[]'],
      ['check_key', 'text[]'],
      ['reason', 'text[]'],
      ['expires_at', 'timestamptz[]'],
      ['created_by', 'text[]'],
      ['created_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'lifecycle_sets',
    key: 'rowid',
    columns: [
      ['version', 'integer[]'],
      ['data', 'text[]'],
      ['imported_by', 'text[]'],
      ['imported_at', 'timestamptz[]'],
    ],
  },
  // The audit log (src/server/audit.ts), ids kept.
  {
    table: 'audit_log',
    key: 'id',
    columns: [
      ['id', 'bigint[]'],
      ['at', 'timestamptz[]'],
      ['actor', 'text[]'],
      ['address', 'text[]'],
      ['action', 'text[]'],
      ['org_id', 'text[]'],
      ['target_type', 'text[]'],
      ['target_id', 'text[]'],
      ['detail', 'text[]'],
    ],
  },
  // Webhooks (src/server/webhooks.ts) with their secrets, the outbox and delivery log (ids kept), the alert marks.
  {
    table: 'webhooks',
    key: 'id',
    columns: [
      ['id', 'text[]'],
      ['org_id', 'text[]'],
      ['url', 'text[]'],
      ['format', 'text[]'],
      ['events', 'text[]'],
      ['include_evidence', 'boolean[]'],
      ['secret', 'text[]'],
      ['created_by', 'text[]'],
      ['created_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'webhook_deliveries',
    key: 'id',
    columns: [
      ['id', 'bigint[]'],
      ['webhook_id', 'text[]'],
      ['org_id', 'text[]'],
      ['event_id', 'text[]'],
      ['event_type', 'text[]'],
      ['device_id', 'text[]'],
      ['body', 'text[]'],
      ['state', 'text[]'],
      ['attempts', 'integer[]'],
      ['next_attempt_at', 'timestamptz[]'],
      ['last_status', 'integer[]'],
      ['last_error', 'text[]'],
      ['created_at', 'timestamptz[]'],
      ['finished_at', 'timestamptz[]'],
    ],
  },
  {
    table: 'alert_marks',
    key: 'rowid',
    columns: [
      ['org_id', 'text[]'],
      ['device_id', 'text[]'],
      ['kind', 'text[]'],
      ['subject', 'text[]'],
      ['since', 'text[]'],
    ],
  },
];

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** Copies the SQLite file at `from` into the PostgreSQL database (created schema and all). */
export async function copyToPostgres(from: string, to: PostgresOptions): Promise<TableCount[]> {
  const source = openDatabase(from, { mustExist: true });
  try {
    const target = await connectPostgres(to);
    try {
      return await copyTables(source, target);
    } finally {
      await target.end();
    }
  } finally {
    source.close();
  }
}

async function copyTables(source: Database, target: Pool): Promise<TableCount[]> {
  // One read transaction: every table is copied as of the same moment, even if a server still writes.
  source.exec('BEGIN');
  try {
    for (const copy of TABLES) await copyTable(source, target, copy);
    await target.query(
      "SELECT setval(pg_get_serial_sequence('posture_results', 'id'), COALESCE((SELECT max(id) FROM posture_results), 0) + 1, false)",
    );
    for (const table of ['audit_log', 'webhook_deliveries'])
      await target.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), COALESCE((SELECT max(id) FROM ${table}), 0) + 1, false)`);
    const counts: TableCount[] = [];
    for (const { table } of TABLES) {
      const sourceCount = (source.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      const { rows } = await target.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
      counts.push({ table, source: sourceCount, target: Number(rows[0]?.n) });
    }
    return counts;
  } finally {
    source.exec('COMMIT');
  }
}

async function copyTable(source: Database, target: Pool, copy: TableCopy): Promise<void> {
  const names = copy.columns.map(([name]) => name);
  const page = source.prepare(
    `SELECT ${copy.key} AS page_key, ${names.join(', ')} FROM ${copy.table} WHERE ${copy.key} > ? ORDER BY ${copy.key} LIMIT ${BATCH_ROWS}`,
  );
  const insert = `INSERT INTO ${copy.table} (${names.join(', ')})
    SELECT * FROM unnest(${copy.columns.map(([, type], i) => `$${i + 1}::${type}`).join(', ')})
    ON CONFLICT DO NOTHING`;
  // Results resume after the highest id already copied; the other tables are small enough to page through again.
  // SQLite orders every integer before any text: an integer key starts after 0, not ''.
  let after: string | number =
    copy.key === 'rowid' || copy.columns.some(([name, type]) => name === copy.key && type === 'bigint[]') ? 0 : '';
  if (copy.table === 'posture_results') {
    const { rows } = await target.query<{ id: string | null }>('SELECT max(id) AS id FROM posture_results');
    after = Number(rows[0]?.id ?? 0);
  }
  for (;;) {
    const rows = page.all(after) as Record<string, unknown>[];
    if (rows.length === 0) return;
    await target.query(
      insert,
      names.map((name) => rows.map((row) => row[name])),
    );
    after = rows[rows.length - 1]!.page_key as string | number;
  }
}
