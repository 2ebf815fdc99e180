// `device-agent status [--json]`: local state only, no network. Exit 0 when enrolled with a readable
// key, 5 when not enrolled, 1 when the key store cannot be read (the report is printed in all cases).
import { readLastCycle, type LastCycle } from '../../agent/lastCycle';
import { describePolicySource } from '../../agent/policySource';
import { collectStatus, enrolledWithText, type StatusReport } from '../../agent/status';
import { stateContext } from '../commandContext';
import type { CommonOptions } from '../commonOptions';
import { EXIT, type ExitCode } from '../exitCodes';

export interface StatusCliOptions extends CommonOptions {
  json?: boolean;
}

export default async function statusCommand(options: StatusCliOptions): Promise<ExitCode> {
  // Read only: an enrollment or wipe cut short is reported, not finished.
  const context = await stateContext(options, { readOnly: true });
  const report = await collectStatus(context.state, context.keystore);
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : humanText(report));
  if (!report.enrolled) return EXIT.notEnrolled;
  if (report.key_available === false) {
    process.stderr.write(`device-agent: ${report.keystore_error}\n`);
    return EXIT.internal;
  }
  return EXIT.ok;
}

function humanText(report: StatusReport): string {
  const rows: Array<[string, string]> = [['Enrolled', report.enrolled ? 'yes' : 'no']];
  if (report.enrolled) {
    rows.push(
      ['Server', report.server_url ?? ''],
      ['Device ID', report.device_id ?? 'not yet known (set by the first heartbeat)'],
      ['Key store', report.keystore === 'keyring' ? 'keyring (OS secret store)' : 'file'],
      ['API key', report.key_available ? 'present' : `UNAVAILABLE: ${report.keystore_error}`],
      ['Enrolled at', report.enrolled_at ?? 'unknown'],
      ['Enrolled with', enrolledWithText(report.enrolled_with ?? undefined)],
      ['Last heartbeat', report.last_heartbeat_at ?? 'never'],
      ['Last upload', report.last_upload_at ?? 'never'],
      ['Queued results', queueText(report)],
    );
    if (report.conflict) rows.push(['Conflict', `${report.conflict.message} (since ${report.conflict.at})`]);
    if (typeof report.clock_skew_ms === 'number')
      rows.push(['Clock skew', `${(report.clock_skew_ms / 1000).toFixed(1)} s (server minus local)`]);
  } else {
    rows.push(['Key store', `${report.keystore} (for the next enrollment)`]);
  }
  if (report.interrupted) {
    const what = report.interrupted === 'enrolling' ? 'an enrollment' : 'an unenrollment';
    rows.push(['Interrupted', `${what} did not finish; the next enroll or unenroll cleans it up`]);
  }
  if (report.revoked_at) rows.push(['Revoked', `${report.revoked_at}: ${report.reason ?? 'no reason recorded'}`]);
  rows.push(['Agent daemon', daemonText(report)], ['State directory', report.state_dir]);
  const lastCycle = report.enrolled ? readLastCycle(report) : undefined;
  if (report.enrolled) rows.push(['Last posture cycle', lastCycle ? cycleText(lastCycle) : 'none yet']);
  const policy = report.enrolled ? describePolicySource(report.policy) : undefined;
  if (policy) rows.push(['Policy', policy]);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`).join('\n');
  const hint = report.enrolled
    ? ''
    : '\nEnroll with: device-agent enroll --server <url> --token-file <file>  (or --enroll-secret-file <file>, or the enrollment link)';
  return `${text}${hint}\n${lastCycle ? failingText(lastCycle) : ''}`;
}

function cycleText(cycle: LastCycle): string {
  const count = (status: string) => cycle.failing.filter((f) => f.status === status).length;
  return `${cycle.at}: ${cycle.results} checks, ${count('FAIL')} failing, ${count('UNKNOWN')} undecided`;
}

/** The last cycle's failing and undecided checks with what each means. */
function failingText(cycle: LastCycle): string {
  if (cycle.failing.length === 0) return '';
  const width = Math.max(...cycle.failing.map((f) => f.check_key.length));
  const lines = cycle.failing.map((f) => `  ${f.status.padEnd(7)}  ${f.check_key.padEnd(width)}  ${f.summary}`);
  return `\n${lines.join('\n')}\n\nRun \`device-agent check\` to see how to fix each one.\n`;
}

function daemonText(report: StatusReport): string {
  if (report.daemon_pid === null) return 'not running';
  const state = report.daemon_state ? `, ${report.daemon_state}` : '';
  const message = report.daemon_message ? `: ${report.daemon_message}` : '';
  return `running (pid ${report.daemon_pid}${state})${message}`;
}

function queueText(report: StatusReport): string {
  const extra = [
    report.dropped_results ? `${report.dropped_results} dropped: queue full` : '',
    report.rejected_results ? `${report.rejected_results} refused by the server` : '',
    report.quarantined_results ? `${report.quarantined_results} in damaged queue files, quarantined` : '',
  ].filter(Boolean);
  return `${report.queued_results}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}
