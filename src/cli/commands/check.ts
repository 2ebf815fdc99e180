// `device-agent check [--json] [--explain] [--only KEY[,KEY…]] [--policy <file>] [--state-dir <dir>]`:
// runs this platform's posture checks locally and prints what would be reported, then what each
// result that is not PASS means and how to fix it (checks/<os>/remediation.ts), and which policy
// judged them: the server's when the agent's state holds one (as the daemon's next cycle would),
// else the local file, else the defaults. Sends nothing. Exit 0 whatever the statuses; 2 for an
// unknown check key, an unusable policy file or an untrusted state directory.
import { existsSync } from 'node:fs';
import type { Explanation } from '../../../checks/remediation';
import { ElevationRequiredError } from '../../agent/errors';
import { describePolicySource, type PolicySource } from '../../agent/policySource';
import type { StoredServerPolicy } from '../../agent/state';
import { CHECK_KEYS, type PostureResult } from '../../protocol/schemas';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';

export interface CheckCliOptions {
  json?: boolean;
  /** Explain PASS results too. */
  explain?: boolean;
  only?: string;
  policy?: string;
  stateDir?: string;
}

/** The server policy the agent's state holds (stored by the daemon once validated), or none and why. */
async function storedServerPolicy(stateDir: string | undefined): Promise<{ served: StoredServerPolicy | null; note?: string }> {
  const [{ openAgentState, resolveStateDir }, { servedPolicyProblem }] = await Promise.all([
    import('../../agent/state'),
    import('../../agent/postureCycle'),
  ]);
  let dir: string;
  try {
    dir = resolveStateDir({ explicit: stateDir });
  } catch (err) {
    // A user beside the installed service: its state is root's; the check still runs, and says so.
    if (err instanceof ElevationRequiredError)
      return { served: null, note: "the service's server policy is readable by an administrator only: sudo device-agent check" };
    throw err;
  }
  if (!existsSync(dir)) return { served: null };
  const served = await (await openAgentState(dir, { readOnly: true })).serverPolicy();
  const problem = served && (await servedPolicyProblem(served.response));
  if (problem) return { served: null, note: `the stored server policy cannot be applied (${problem})` };
  return { served };
}

/** The keys named by --only, validated against the official nine. */
export function parseOnly(only: string | undefined): string[] | undefined {
  if (only === undefined) return undefined;
  const keys = only
    .split(',')
    .map((k) => k.trim().toUpperCase())
    .filter(Boolean);
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
  const picked = evidence.reason ?? evidence.rule ?? '';
  const head = typeof picked === 'string' ? picked : JSON.stringify(picked);
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

const TEXT_WIDTH = 100;

/**
 * Words wrapped at TEXT_WIDTH, each line indented; the text's own line breaks are kept, and a
 * `command` is never split, so that it can be copied whole.
 */
export function wrap(text: string, indent: string): string {
  return text
    .split('\n')
    .map((paragraph) => {
      const tokens = paragraph.match(/(?:`[^`]*`|\S)+/g) ?? [];
      const lines: string[] = [];
      let line = '';
      for (const token of tokens) {
        if (line && indent.length + line.length + 1 + token.length > TEXT_WIDTH) {
          lines.push(line);
          line = token;
        } else line = line ? `${line} ${token}` : token;
      }
      lines.push(line);
      return lines.map((l) => `${indent}${l}`).join('\n');
    })
    .join('\n');
}

/** Below the table: what each result means and what to do (the admin's text is in --json). */
export function renderExplanations(results: readonly PostureResult[], explanations: readonly Explanation[], all: boolean): string {
  const blocks = results
    .map((r, i) => ({ r, e: explanations[i]! }))
    .filter(({ r }) => all || r.status !== 'PASS')
    .map(({ r, e }) => {
      const lines = [`${r.check_key}  ${r.status}${e.word ? ` (${e.word})` : ''}`, wrap(e.summary, '  ')];
      if (r.status !== 'PASS' && e.fix !== 'Nothing to do.') lines.push('  How to fix:', wrap(e.fix, '    '));
      return lines.join('\n');
    });
  return blocks.length > 0 ? `\n${blocks.join('\n\n')}\n` : '';
}

export default async function checkCommand(options: CheckCliOptions): Promise<ExitCode> {
  const only = parseOnly(options.only);
  const { postureCollector } = await import('../../agent/postureCycle');
  const [collect, { served, note }] = await Promise.all([
    postureCollector({ policyFile: options.policy, ...(only ? { only } : {}) }),
    storedServerPolicy(options.stateDir),
  ]);
  const { results, explanations, policy } = await collect(served);
  if (options.json) {
    // Local only: these texts are never part of what /postures receives; nor is the policy that judged each result.
    const judgedBy: PolicySource & { note?: string } = { ...policy, ...(note ? { note } : {}) };
    const explained = results.map((r, i) => ({
      ...r,
      summary: explanations[i]!.summary,
      fix: explanations[i]!.fix,
      admin: explanations[i]!.admin,
      policy: judgedBy,
    }));
    process.stdout.write(`${JSON.stringify(explained, null, 2)}\n`);
  } else {
    const policyLine = `\nPolicy: ${describePolicySource(policy)!}${note ? ` (${note})` : ''}\n`;
    process.stdout.write(renderTable(results) + renderExplanations(results, explanations, options.explain === true) + policyLine);
  }
  return EXIT.ok;
}
