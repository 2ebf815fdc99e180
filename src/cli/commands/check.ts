// `device-agent check [--json] [--only KEY[,KEY…]] [--policy <file>]`: runs this platform's posture
// checks locally and prints what would be reported; sends nothing. Exit 0 whatever the statuses;
// 2 for an unknown check key or an unusable policy file.
import type { Check } from '../../../checks/types';
import { currentPlatform } from '../../platform/current';
import { CHECK_KEYS, type PostureResult } from '../../protocol/schemas';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface CheckCliOptions {
  json?: boolean;
  only?: string;
  policy?: string;
}

/** The keys named by --only, validated against the official nine. */
export function parseOnly(only: string | undefined): string[] | undefined {
  if (only === undefined) return undefined;
  const keys = only.split(',').map((k) => k.trim().toUpperCase()).filter(Boolean);
  if (keys.length === 0) throw new CommandFailure('--only needs at least one check key', EXIT.usage);
  const unknown = keys.filter((k) => !(CHECK_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new CommandFailure(`unknown check key in --only: ${unknown.join(', ')} (known: ${CHECK_KEYS.join(', ')})`, EXIT.usage);
  }
  return [...new Set(keys)];
}

/** Evidence fields that explain little on one line. */
const QUIET_FIELDS = new Set(['reason', 'rule', 'source', 'container', 'container_signals', 'lifecycle_checked_at', 'truncated']);
const DETAIL_WIDTH = 110;

/** Scalars and short lists; null, empty lists and objects are left to --json. */
function showValue(value: unknown): string | undefined {
  if (['string', 'number', 'boolean'].includes(typeof value)) return String(value);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => ['string', 'number'].includes(typeof v))) return value.join(',');
  return undefined;
}

/** One line: the reason (UNKNOWN/NOT_APPLICABLE) or the deciding rule, then the scalar facts. */
export function summarize(result: PostureResult): string {
  const evidence = result.evidence ?? {};
  const head = String(evidence.reason ?? evidence.rule ?? '');
  const facts = Object.entries(evidence)
    .filter(([k]) => !QUIET_FIELDS.has(k))
    .map(([k, v]) => {
      const shown = showValue(v);
      return shown === undefined ? undefined : `${k}=${shown}`;
    })
    .filter((f): f is string => f !== undefined)
    .join(' ');
  const line = [head, facts].filter(Boolean).join(': ');
  return line.length > DETAIL_WIDTH ? `${line.slice(0, DETAIL_WIDTH - 1)}…` : line;
}

export function renderTable(results: readonly PostureResult[]): string {
  const rows = [['CHECK', 'STATUS', 'DETAIL'], ...results.map((r) => [r.check_key, r.status, summarize(r)])];
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd()).join('\n') + '\n';
}

export default async function checkCommand(options: CheckCliOptions): Promise<ExitCode> {
  const only = parseOnly(options.only);
  const [{ loadChecks }, { runChecks }, { createSystemHost }, { DEFAULT_POLICY, loadPolicyFile, PolicyError }] = await Promise.all([
    import('../../../checks/registry'),
    import('../../../checks/engine'),
    import('../../../checks/host'),
    import('../../../checks/policy'),
  ]);
  let policy = DEFAULT_POLICY;
  if (options.policy) {
    try {
      policy = loadPolicyFile(options.policy);
    } catch (err) {
      if (err instanceof PolicyError) throw new CommandFailure(err.message, EXIT.usage);
      throw err;
    }
  }
  const platform = currentPlatform();
  const available = await loadChecks(platform);
  const selected: readonly Check[] = only ? available.filter((c) => only.includes(c.key)) : available;
  const missing = only?.filter((k) => !selected.some((c) => c.key === k)) ?? [];
  if (missing.length > 0) throw new CommandFailure(`no ${missing.join(', ')} check on ${platform}`, EXIT.usage);
  const results = await runChecks(selected, { host: createSystemHost(), policy });
  process.stdout.write(options.json ? `${JSON.stringify(results, null, 2)}\n` : renderTable(results));
  return EXIT.ok;
}
