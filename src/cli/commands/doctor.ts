// `device-agent doctor [--json]`: the checklist of src/agent/doctor.ts, one line per check with its
// verdict and next step. Exit 0 when nothing failed or stayed unknown, 1 otherwise.
import { runDoctor, type DoctorCheck, type Verdict } from '../../agent/doctor';
import { resolveStateDir } from '../../agent/state';
import type { CommonOptions } from '../commonOptions';
import { EXIT, type ExitCode } from '../exitCodes';

export interface DoctorCliOptions extends CommonOptions {
  json?: boolean;
}

const MARK: Record<Verdict, string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP', unknown: '????' };

export default async function doctorCommand(options: DoctorCliOptions): Promise<ExitCode> {
  // Not commandContext: an untrusted state directory is a finding here, not a refusal.
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  const checks = await runDoctor({ stateDir, caFile: options.caFile });
  const ok = checks.every((check) => check.verdict !== 'fail' && check.verdict !== 'unknown');
  process.stdout.write(options.json ? `${JSON.stringify({ ok, state_dir: stateDir, checks }, null, 2)}\n` : humanText(checks, ok));
  return ok ? EXIT.ok : EXIT.internal;
}

function humanText(checks: DoctorCheck[], ok: boolean): string {
  const width = Math.max(...checks.map((check) => check.id.length));
  const lines = checks.map((check) => {
    const line = `${MARK[check.verdict]}  ${check.id.padEnd(width)}  ${check.detail}`;
    return check.next ? `${line}\n      ${' '.repeat(width)}  next: ${check.next}` : line;
  });
  const failed = checks.filter((check) => check.verdict === 'fail' || check.verdict === 'unknown').map((check) => check.id);
  lines.push('', ok ? 'Verdict: everything checked works.' : `Verdict: not working: ${failed.join(', ')} (see "next" above).`);
  return `${lines.join('\n')}\n`;
}
