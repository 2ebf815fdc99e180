// Human-readable output of `policy show|history` and `lifecycle import|show`; the --json forms print
// the objects as they are (displayJson). Administrators' text still goes through displayText.
import { humanTime, table } from './adminOutput';
import { displayJson, displayText } from './displayText';
import type { ExceptionView } from './exceptions';
import type { LifecycleVersionView, PolicyChangeView, PolicyView } from './policy';

export function formatPolicy(view: PolicyView): string {
  const of = view.label === null ? `organization "${view.org}"` : `label ${view.label} in organization "${view.org}"`;
  const set = Object.keys(view.document).length === 0 ? '(nothing set: the defaults)' : displayJson(view.document);
  return [
    `Policy of ${displayText(of)}, version ${view.version}`,
    '',
    'Set:',
    indent(set),
    '',
    'Every setting (defaults filled in):',
    indent(displayJson(view.effective)),
    ...(view.labels.length > 0 ? ['', `Labels with a refinement: ${displayText(view.labels.join(', '))}`] : []),
    '',
  ].join('\n');
}

export function formatPolicyHistory(changes: readonly PolicyChangeView[]): string {
  if (changes.length === 0) return 'No policy changes.\n';
  return table(
    ['VERSION', 'LABEL', 'CHANGED AT', 'BY', 'WHAT CHANGED'],
    changes.map((c) => [
      String(c.version),
      c.label,
      humanTime(c.changed_at),
      c.changed_by,
      c.removed ? 'removed' : c.changed.length === 0 ? '(nothing)' : c.changed.join(', '),
    ]),
  );
}

export function formatLifecycle(view: LifecycleVersionView): string {
  const source = view.version === 0 ? 'the data built into this server' : `imported ${humanTime(view.imported_at)} by ${view.imported_by}`;
  return (
    `Lifecycle data version ${view.version} (${displayText(source)})\n` +
    table(
      ['PLATFORM', 'DATA AS OF', ''],
      Object.entries(view.platforms).map(([platform, p]) => [platform, p.committed_at, p.built_in ? 'built in' : 'imported']),
    )
  );
}

export function formatExceptions(exceptions: readonly ExceptionView[]): string {
  if (exceptions.length === 0) return 'No exceptions in force.\n';
  return table(
    ['EXCEPTION', 'DEVICE OR LABEL', 'CHECK', 'UNTIL', 'BY', 'REASON'],
    exceptions.map((e) => [e.exception_id, e.device_id ?? e.label, e.check_key, humanTime(e.expires_at), e.created_by, e.reason]),
  );
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
