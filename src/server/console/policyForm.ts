// The console's policy page: the common settings of an organization's policy as a form (not raw
// JSON), each with its meaning and default (docs/checks.md, "Policy"). A submitted form changes only
// those settings in the stored document, drops a setting set back to its default, and goes through
// the same validation as the CLI and the API (src/server/policy.ts): an invalid value is shown on
// the form with its setting and why, and nothing is stored.
import { DEFAULT_POLICY } from '../../../checks/policy';
import { CHECK_KEYS } from '../../protocol/constants';
import type { PolicyView } from '../policy';
import { UsageError } from '../usage';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, layout, type PageContext } from './pages';

interface Setting {
  /** Dotted path in the policy. */
  path: string;
  label: string;
  meaning: string;
  kind: 'count' | 'flag';
}

const SETTINGS: readonly Setting[] = [
  {
    path: 'screenLock.maxIdleSeconds',
    label: 'Screen lock: longest idle time (s)',
    meaning: 'idle time before the screen must lock',
    kind: 'count',
  },
  {
    path: 'screenLock.maxGraceSeconds',
    label: 'Screen lock: longest grace (s)',
    meaning: 'time between blanking and locking',
    kind: 'count',
  },
  {
    path: 'password.minLength',
    label: 'Password: minimum length',
    meaning: 'shortest password the local policy must enforce',
    kind: 'count',
  },
  { path: 'password.requireComplexity', label: 'Password: require character classes', meaning: 'also require complexity', kind: 'flag' },
  {
    path: 'malware.maxSignatureAgeDays',
    label: 'Malware: signature age (days)',
    meaning: 'Defender or ClamAV signatures older than this FAIL',
    kind: 'count',
  },
  {
    path: 'autoUpdate.acceptDownloadOnly',
    label: 'Updates: accept download-only',
    meaning: 'count "download, install by hand" as compliant',
    kind: 'flag',
  },
  {
    path: 'remoteLogin.allowSshIfHardened',
    label: 'Remote login: allow hardened SSH',
    meaning: 'PASS an SSH server refusing passwords and root',
    kind: 'flag',
  },
  {
    path: 'osVersion.graceDaysAfterEol',
    label: 'OS: grace after end of support (days)',
    meaning: 'days after the end of support before FAIL',
    kind: 'count',
  },
  {
    path: 'osVersion.acceptExtendedSupport.debianLts',
    label: 'OS: accept Debian LTS',
    meaning: 'Debian LTS counts as support',
    kind: 'flag',
  },
  {
    path: 'osVersion.acceptExtendedSupport.ubuntuEsm',
    label: 'OS: accept Ubuntu ESM',
    meaning: 'Ubuntu Pro ESM counts as support',
    kind: 'flag',
  },
  {
    path: 'osVersion.acceptExtendedSupport.rhelEls',
    label: 'OS: accept RHEL ELS',
    meaning: 'RHEL Extended Life Cycle Support counts',
    kind: 'flag',
  },
  { path: 'osVersion.acceptExtendedSupport.suseLtss', label: 'OS: accept SUSE LTSS', meaning: 'SUSE LTSS counts as support', kind: 'flag' },
  {
    path: 'osVersion.acceptExtendedSupport.windowsEsu',
    label: 'OS: accept Windows ESU',
    meaning: 'Windows Extended Security Updates count',
    kind: 'flag',
  },
  {
    path: 'checks.graceSeconds',
    label: 'Grace for a new FAIL (s)',
    meaning:
      'how long a check\'s new FAIL is "in grace" before it counts as failing (overview, device list, webhooks); at most 30 days; 0: none',
    kind: 'count',
  },
];

function valueAt(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined), value);
}

function setAt(document: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = document;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    node = node[key] = typeof next === 'object' && next !== null && !Array.isArray(next) ? { ...(next as Record<string, unknown>) } : {};
  }
  if (value === undefined) delete node[keys.at(-1)!];
  else node[keys.at(-1)!] = value;
}

/** Drops objects left empty by removing default values. */
function pruned(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const inner = pruned(v as Record<string, unknown>);
      if (Object.keys(inner).length > 0) out[key] = inner;
    } else out[key] = v;
  }
  return out;
}

/** The stored document with the form's settings applied; a setting equal to its default is removed. */
export function documentFromForm(current: Record<string, unknown>, form: Record<string, string>): Record<string, unknown> {
  const document = structuredClone(current);
  for (const setting of SETTINGS) {
    let value: unknown;
    if (setting.kind === 'flag') value = form[setting.path] === 'on';
    else {
      const text = (form[setting.path] ?? '').trim();
      if (!/^\d{1,9}$/.test(text)) throw new UsageError(`invalid policy at ${setting.path}: expected a whole number`);
      value = Number(text);
    }
    setAt(document, setting.path, value === valueAt(DEFAULT_POLICY, setting.path) ? undefined : value);
  }
  const disabled = CHECK_KEYS.filter((key) => form[`disabled.${key}`] === 'on');
  setAt(document, 'checks.disabled', disabled.length > 0 ? disabled : undefined);
  // A check's own grace: left empty, checks.graceSeconds applies.
  const byCheck: Record<string, number> = {};
  for (const key of CHECK_KEYS) {
    const text = (form[`grace.${key}`] ?? '').trim();
    if (text === '') continue;
    if (!/^\d{1,9}$/.test(text))
      throw new UsageError(`invalid policy at checks.graceSecondsByCheck.${key}: expected a whole number or nothing`);
    byCheck[key] = Number(text);
  }
  setAt(document, 'checks.graceSecondsByCheck', Object.keys(byCheck).length > 0 ? byCheck : undefined);
  return pruned(document);
}

export function policyPage(
  context: PageContext,
  view: PolicyView | undefined,
  org: string | undefined,
  error?: string,
  exceptions?: Html,
): Html {
  const scopedOrg = context.principal?.orgName ?? undefined;
  const chooser = html`<form method="get" action="${CONSOLE_PREFIX}/policy" class="stack">
    <label
      >Organization <input name="org" value="${org ?? ''}" ${scopedOrg ? html`readonly` : html`placeholder="e.g. acme"`} required
    /></label>
    <button type="submit">Show its policy</button>
  </form>`;
  if (!view)
    return layout(
      'Policy',
      context,
      html`<h1>Policy</h1>
        ${chooser}`,
      'policy',
    );
  const effective = view.effective as unknown;
  const disabled = new Set<string>(view.effective.checks.disabled);
  const graceByCheck: Partial<Record<string, number>> = view.effective.checks.graceSecondsByCheck;
  return layout(
    'Policy',
    context,
    html`<h1>Policy of ${view.org}</h1>
      <p class="muted">
        Version ${view.version}. Agents apply it from their next posture cycle. Settings left at their default are not stored; the command
        line and the admin API edit every setting (docs/checks.md).
      </p>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <form method="post" action="${CONSOLE_PREFIX}/policy?org=${encodeURIComponent(view.org)}" class="stack">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <table>
          <thead>
            <tr>
              <th>Setting</th>
              <th>Value</th>
              <th>Meaning</th>
              <th>Default</th>
            </tr>
          </thead>
          <tbody>
            ${SETTINGS.map((s) => {
              const value = valueAt(effective, s.path);
              const input =
                s.kind === 'flag'
                  ? html`<input type="checkbox" name="${s.path}" ${value === true ? html`checked` : ''} />`
                  : html`<input type="number" min="0" step="1" name="${s.path}" value="${String(value)}" required />`;
              return html`<tr>
                <th scope="row"><label>${s.label}</label><br /><code>${s.path}</code></th>
                <td>${input}</td>
                <td>${s.meaning}</td>
                <td>${String(valueAt(DEFAULT_POLICY, s.path))}</td>
              </tr>`;
            })}
            <tr>
              <th scope="row">Checks turned off<br /><code>checks.disabled</code></th>
              <td>
                ${CHECK_KEYS.map(
                  (key) =>
                    html`<label><input type="checkbox" name="disabled.${key}" ${disabled.has(key) ? html`checked` : ''} /> ${key}</label
                      ><br />`,
                )}
              </td>
              <td>not run; sent as NOT_APPLICABLE (disabled_by_policy)</td>
              <td>none</td>
            </tr>
            <tr>
              <th scope="row">Grace per check (s)<br /><code>checks.graceSecondsByCheck</code></th>
              <td>
                ${CHECK_KEYS.map(
                  (key) =>
                    html`<label
                        >${key}
                        <input type="number" min="0" step="1" name="grace.${key}" value="${graceByCheck[key]?.toString() ?? ''}" /></label
                      ><br />`,
                )}
              </td>
              <td>a check's own grace for a new FAIL, instead of checks.graceSeconds; empty: checks.graceSeconds applies</td>
              <td>none</td>
            </tr>
          </tbody>
        </table>
        <button type="submit">Save as version ${view.version + 1}</button>
      </form>
      ${exceptions}`,
    'policy',
  );
}
