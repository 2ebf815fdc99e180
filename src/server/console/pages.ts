// The console's pages as server-rendered HTML: no script, no framework, nothing from elsewhere.
// Each function takes what the service layer returned and gives the page; routes.ts does the rest.
import { CHECK_KEYS, PLATFORMS, STATUSES } from '../../protocol/constants';
import type {
  ComplianceDay,
  ComplianceSummary,
  CreatedDevice,
  DeviceListItem,
  DevicePage,
  DeviceView,
  LatestView,
  PostureHistory,
  PostureView,
  StatusChange,
  StatusChanges,
} from '../admin';
import { listedStatus } from '../admin';
import type { AdminPrincipal } from '../adminAccess';
import type { SignInAttempts } from '../db/store';
import { CHECK_AGAIN_PATH, type DevicePageView } from '../devicePage';
import type { FleetFailure } from '../remediation';
import { complianceChart } from './chart';
import type { EnrollWay } from './enrollInstructions';
import { html, withCodeSpans, type Html, type Interpolation } from './html';

export const CONSOLE_PREFIX = '/console';
export const STYLESHEET_PATH = `${CONSOLE_PREFIX}/static/console.css`;

export interface PageContext {
  principal: AdminPrincipal | null;
  csrfToken: string;
  now: Date;
  /** Sign-in attempts on the signed-in account since its last sign-in (signInThrottle.ts). */
  signInAttempts?: Readonly<SignInAttempts>;
}

const NAV = [
  ['overview', 'Overview'],
  ['devices', 'Devices'],
  ['enroll', 'Enroll a device'],
  ['policy', 'Policy'],
  ['secrets', 'Enrollment secrets'],
  ['webhooks', 'Webhooks'],
  ['audit', 'Audit log'],
] as const;

/** The document every page is: the console's stylesheet, a header, the main part. */
function documentOf(title: string, header: Html, main: Html, head: Interpolation = null): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
        ${head}
      </head>
      <body>
        ${header}
        <main>${main}</main>
      </body>
    </html> `;
}

export function layout(title: string, context: PageContext, body: Html, current?: string): Html {
  const { principal } = context;
  return documentOf(
    `${title} · device-agent console`,
    html`<header>
      <a class="brand" href="${CONSOLE_PREFIX}/overview">device-agent</a>
      ${
        principal &&
        html`<nav>
            ${NAV.map(([path, label]) => html`<a href="${CONSOLE_PREFIX}/${path}" ${current === path ? html` aria-current="page"` : ''}>${label}</a>`)}
          </nav>
          <form method="post" action="${CONSOLE_PREFIX}/sign-out" class="signout">
            <span>${principal.account ?? principal.actor} · ${principal.orgName ?? 'all organizations'}</span>
            <input type="hidden" name="_csrf" value="${context.csrfToken}" />
            <button type="submit">Sign out</button>
          </form>`
      }
    </header>`,
    html`${context.signInAttempts && signInNotice(context.signInAttempts, context.now)}${body}`,
  );
}

/** Shown to an account's sessions: someone else may be guessing its password. */
function signInNotice(attempts: Readonly<SignInAttempts>, now: Date): Html {
  const time = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return html`<p class="error" role="alert" id="sign-in-attempts">
    ${attempts.attempts} sign-in ${attempts.attempts === 1 ? 'attempt' : 'attempts'} on this account since ${time(attempts.firstAt)}, the
    last from ${attempts.lastAddress} at
    ${time(attempts.lastAt)}${attempts.blockedUntil > now.getTime() ? `; further attempts wait until ${time(attempts.blockedUntil)}` : ''}.
    If they were not yours, change the password (<code>device-agent-server admin passwd</code>).
  </p>`;
}

export function signInPage(context: PageContext, error?: string, email = ''): Html {
  return layout(
    'Sign in',
    context,
    html`<h1>Sign in</h1>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <form method="post" action="${CONSOLE_PREFIX}/sign-in" class="stack">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <label>Email <input type="email" name="email" value="${email}" autocomplete="username" required /></label>
        <label>Password <input type="password" name="password" autocomplete="current-password" required /></label>
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">
        Accounts are created on the server:
        <code>device-agent-server admin add --db &lt;file&gt; --email &lt;email&gt; --org &lt;name&gt;</code>
      </p>`,
  );
}

export function errorPage(context: PageContext, status: number, message: string): Html {
  return layout(
    `Error ${status}`,
    context,
    html`<h1>${status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Something went wrong'}</h1>
      <p class="error">${message}</p>
      <p><a href="${CONSOLE_PREFIX}/overview">Back to the overview</a></p>`,
  );
}

/** "2026-11-24 18:59 UTC (5 min ago)", or a dash. */
export function when(iso: string | null, now: Date): Html {
  if (iso === null) return html`<span class="muted">—</span>`;
  const at = new Date(iso);
  return html`<time datetime="${iso}" title="${iso}"
    >${iso.slice(0, 16).replace('T', ' ')} UTC <span class="muted">(${ago(now.getTime() - at.getTime())})</span></time
  >`;
}

function ago(ms: number): string {
  const future = ms < 0;
  const s = Math.abs(ms) / 1000;
  const text =
    s < 90
      ? `${Math.round(s)} s`
      : s < 5400
        ? `${Math.round(s / 60)} min`
        : s < 129_600
          ? `${Math.round(s / 3600)} h`
          : `${Math.round(s / 86_400)} days`;
  return future ? `in ${text}` : `${text} ago`;
}

export function status(value: string): Html {
  return html`<span class="status status-${value.toLowerCase()}">${value.replace('_', ' ')}</span>`;
}

function orgPicker(context: PageContext, org: string | undefined, action: string): Interpolation {
  if (context.principal?.scope.orgId !== null) return null;
  return html`<form method="get" action="${action}" class="inline">
    <label>Organization <input name="org" value="${org ?? ''}" placeholder="all" /></label> <button type="submit">Show</button>
  </form>`;
}

/** A device list's address with these filters (and the organization shown, if one is). */
function listLink(org: string | undefined, filters: Record<string, string | null | undefined>): string {
  const params = new URLSearchParams();
  if (org) params.set('org', org);
  for (const [key, value] of Object.entries(filters)) if (value !== undefined && value !== null) params.set(key, value);
  const text = params.toString();
  return `${CONSOLE_PREFIX}/devices${text ? `?${text}` : ''}`;
}

/** A count linking to the list of exactly the devices it counts (0 is not a link: that list is empty). */
function countLink(count: number, href: string, label?: string): Html {
  const text = label === undefined ? String(count) : `${count} ${label}`;
  return count === 0 ? html`<span class="count">${text}</span>` : html`<a class="count" href="${href}">${text}</a>`;
}

export function overviewPage(
  context: PageContext,
  view: { org: string | undefined; summary: ComplianceSummary; days: ComplianceDay[]; failures: FleetFailure[] },
): Html {
  const { summary } = view;
  const to = (filters: Record<string, string | null | undefined>) => listLink(view.org, filters);
  const checkLink = (check: string, filters: Record<string, string>) => to({ state: 'ACTIVE', check, ...filters });
  if (summary.devices.total === 0)
    return layout(
      'Overview',
      context,
      html`<h1>Fleet overview${view.org && html` · ${view.org}`}</h1>
        ${orgPicker(context, view.org, `${CONSOLE_PREFIX}/overview`)} ${firstDeviceSteps()}`,
      'overview',
    );
  return layout(
    'Overview',
    context,
    html`<h1>Fleet overview${view.org && html` · ${view.org}`}</h1>
      ${orgPicker(context, view.org, `${CONSOLE_PREFIX}/overview`)}
      <section class="cards">
        <div class="card">
          <h2>Devices</h2>
          <p class="big">${countLink(summary.devices.total, to({}))}</p>
          <p>${Object.entries(summary.devices.by_state).map(([state, n]) => html`${status(state)} ${countLink(n, to({ state }))} `)}</p>
        </div>
        <div class="card">
          <h2>Platforms</h2>
          <ul class="plain">
            ${Object.entries(summary.devices.by_platform).map(
              ([platform, n]) =>
                html`<li>
                  ${platform}:
                  ${countLink(n, to({ platform }))}${platform === 'UNKNOWN' && html` <span class="muted">(no heartbeat yet)</span>`}
                </li>`,
            )}
          </ul>
        </div>
        <div class="card">
          <h2>Presence</h2>
          <p>${countLink(summary.presence.active, to({ state: 'ACTIVE' }), 'active')}</p>
          <p>
            ${countLink(summary.presence.stale, to({ state: 'ACTIVE', last_seen_before: summary.presence.stale_before }), 'stale')}
            <span class="muted"
              >(not seen for ${Math.round(summary.presence.stale_after_seconds / 60)} min, twice the heartbeat interval)</span
            >
          </p>
          <p>
            ${countLink(summary.presence.offline, to({ state: 'ACTIVE', last_seen_before: summary.presence.offline_before }), 'offline')}
            <span class="muted">(not seen for ${summary.presence.offline_after_seconds / 86_400} days)</span>
          </p>
        </div>
        <div class="card">
          <h2>Agent versions</h2>
          <ul class="plain">
            ${summary.agent_versions.map(
              (v) =>
                html`<li>
                  ${v.agent_version ?? 'unknown'}:
                  ${v.agent_version === null ? v.devices : countLink(v.devices, to({ state: 'ACTIVE', agent_version: v.agent_version }))}
                </li>`,
            )}
          </ul>
        </div>
        <div class="card">
          <h2>OS releases</h2>
          <ul class="plain">
            ${summary.os_releases.map(
              (r) =>
                html`<li>
                  ${r.platform ?? 'unknown'} ${r.os_version ?? ''}:
                  ${
                    r.platform === null
                      ? countLink(r.devices, to({ state: 'ACTIVE', platform: 'UNKNOWN' }))
                      : r.os_version === null
                        ? r.devices
                        : countLink(r.devices, to({ state: 'ACTIVE', platform: r.platform, os_version: r.os_version }))
                  }
                </li>`,
            )}
          </ul>
        </div>
      </section>
      <h2>Compliance over the last ${view.days.length} days</h2>
      ${complianceChart(view.days)}
      <h2>Compliance per check</h2>
      <p class="muted">
        Active devices by the status of their latest result, however old: a device that stopped reporting keeps its last known status, and
        "stale" counts those whose result is older than twice the posture interval. FAIL counts failures past their check's grace period
        (the policy's), "FAIL in grace" those still within it. Each number opens the list of exactly those devices.
      </p>
      <div class="scroll">
        <table class="checks">
          <thead>
            <tr>
              <th>Check</th>
              ${STATUSES.map((s) => html`<th>${status(s)}</th>`)}
              <th>FAIL in grace</th>
              <th>FAIL excepted</th>
              <th>no result</th>
              <th>of which stale</th>
            </tr>
          </thead>
          <tbody>
            ${summary.checks.map(
              (c) =>
                html`<tr>
                  <th scope="row">${c.check_key}</th>
                  ${STATUSES.map(
                    (s) =>
                      html`<td>
                        ${countLink(c[s], checkLink(c.check_key, s === 'FAIL' ? { status: s, excepted: 'false' } : { status: s }))}
                      </td>`,
                  )}
                  <td>${countLink(c.IN_GRACE, checkLink(c.check_key, { status: 'IN_GRACE', excepted: 'false' }))}</td>
                  <td>${countLink(c.EXCEPTED, checkLink(c.check_key, { status: 'FAIL', excepted: 'true' }))}</td>
                  <td>${countLink(c.MISSING, checkLink(c.check_key, { status: 'MISSING' }))}</td>
                  <td>${countLink(c.STALE, checkLink(c.check_key, { result_before: summary.results_stale_before }))}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${summary.checks.length === 0 && html`<p class="muted">No posture results yet: an enrolled agent reports its checks within a posture interval.</p>`}
      <h2>What fails, and how to fix it for the fleet</h2>
      ${view.failures.length === 0 ? html`<p class="muted">No active device fails a check.</p>` : ''}
      ${view.failures.map(
        (f) =>
          html`<article class="failure">
            <h3>
              <a
                class="count"
                href="${to({ state: 'ACTIVE', platform: f.platform || 'UNKNOWN', check: f.check_key, status: 'FAIL', rule: f.word })}"
                >${f.devices.length} ${f.devices.length === 1 ? 'device fails' : 'devices fail'} ${f.check_key}</a
              >
              on ${f.platform || 'an unknown platform'}${f.word && html`: <code>${f.word}</code>`}
            </h3>
            <p>${f.summary}</p>
            <details>
              <summary>How to fix it for the fleet</summary>
              <p class="prose">${f.admin}</p>
            </details>
          </article>`,
      )}`,
    'overview',
  );
}

/** The empty fleet's first step. */
function firstDeviceSteps(): Html {
  return html`<section class="note" id="first-device">
    <h2>No devices yet</h2>
    <p>
      Enroll the first one: <a href="${CONSOLE_PREFIX}/enroll">create a device and its one-time enrollment link</a>, or, to enroll many
      machines from your MDM or configuration management, <a href="${CONSOLE_PREFIX}/secrets">create an enrollment secret</a>. Each device
      then reports its checks here.
    </p>
  </section>`;
}

export interface DeviceListView {
  query: Record<string, string | undefined>;
  page: DevicePage;
}

const SORTABLE = [
  ['hostname', 'Hostname'],
  ['last_seen_at', 'Last seen'],
  ['created_at', 'Created'],
  ['failing_checks', 'Failing'],
  ['agent_version', 'Agent'],
] as const;

/** Filters the list's form has no field for (set by an overview link): kept as they are when the form is sent. */
const CARRIED_FILTERS = ['result_before', 'rule', 'excepted', 'os_version', 'last_seen_before', 'last_seen_after'] as const;

/** The checks' short names in the list's status column, in the order of CHECK_KEYS. */
const CHECK_ABBREVIATIONS: Record<string, string> = {
  DISK_ENCRYPTION: 'DSK',
  SCREEN_LOCK: 'SCR',
  FIREWALL_ENABLED: 'FW',
  OS_VERSION: 'OS',
  AUTO_UPDATE: 'UPD',
  PASSWORD_POLICY: 'PWD',
  MALWARE_PROTECTION: 'AV',
  REMOTE_LOGIN: 'RMT',
  TIME_SYNC: 'NTP',
};

export function devicesPage(context: PageContext, view: DeviceListView): Html {
  const q = view.query;
  const link = (changes: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries({ ...q, ...changes })) if (value !== undefined && value !== '') params.set(key, value);
    const text = params.toString();
    return `${CONSOLE_PREFIX}/devices${text ? `?${text}` : ''}`;
  };
  const sort = q.sort ?? 'created_at';
  const order = q.order ?? 'asc';
  const sortHeader = (key: string, label: string) => {
    const active = sort === key;
    const next = active && order === 'asc' ? 'desc' : 'asc';
    return html`<th${active ? html` aria-sort="${order === 'asc' ? 'ascending' : 'descending'}"` : ''} data-sort="${key}"><a href="${link({ sort: key, order: next, cursor: undefined })}">${label}${active ? (order === 'asc' ? ' ▲' : ' ▼') : ''}</a></th>`;
  };
  const option = (value: string, current: string | undefined, label = value) =>
    html`<option value="${value}" ${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  const filtered = Object.keys(q).some((key) => key !== 'sort' && key !== 'order' && key !== 'cursor');
  return layout(
    'Devices',
    context,
    html`<h1>Devices</h1>
      <form method="get" action="${CONSOLE_PREFIX}/devices" class="filters">
        ${context.principal?.scope.orgId === null && html`<label>Organization <input name="org" value="${q.org ?? ''}" placeholder="all" /></label>`}
        <label
          >State
          <select name="state">
            ${option('', q.state, 'any')}${['PENDING', 'ACTIVE', 'REVOKED'].map((s) => option(s, q.state))}
          </select></label
        >
        <label
          >Platform
          <select name="platform">
            ${option('', q.platform, 'any')}${[...PLATFORMS, 'UNKNOWN'].map((p) => option(p, q.platform))}
          </select></label
        >
        <label
          >Failing
          <select name="failing">
            ${option('', q.failing, '—')}${option('any', q.failing, 'any check')}${CHECK_KEYS.map((c) => option(c, q.failing))}
          </select></label
        >
        <label
          >Check
          <select name="check">
            ${option('', q.check, '—')}${CHECK_KEYS.map((c) => option(c, q.check))}
          </select></label
        >
        <label
          >Its status
          <select name="status">
            ${option('', q.status, 'any')}${[...STATUSES, 'IN_GRACE', 'MISSING'].map((s) => option(s, q.status))}
          </select></label
        >
        <label>Fails at least (checks) <input name="min_failing" value="${q.min_failing ?? ''}" inputmode="numeric" size="3" /></label>
        <label>Agent version <input name="agent_version" value="${q.agent_version ?? ''}" size="8" /></label>
        <label>Label <input name="label" value="${q.label ?? ''}" placeholder="key=value" size="12" /></label>
        <label>Hostname <input name="hostname" value="${q.hostname ?? ''}" placeholder="contains…" /></label>
        ${CARRIED_FILTERS.filter((key) => q[key] !== undefined).map(
          (key) => html`<label>${key.replaceAll('_', ' ')} <input name="${key}" value="${q[key] ?? ''}" /></label>`,
        )}
        <input type="hidden" name="sort" value="${sort}" /><input type="hidden" name="order" value="${order}" />
        <button type="submit">Filter</button> <a href="${CONSOLE_PREFIX}/devices">Clear</a>
      </form>
      <div class="scroll">
        <table class="devices">
          <thead>
            <tr>
              ${sortHeader('hostname', SORTABLE[0][1])} ${sortHeader('failing_checks', SORTABLE[3][1])}
              <th>Checks</th>
              <th>Platform and OS</th>
              ${sortHeader('agent_version', SORTABLE[4][1])}${sortHeader('last_seen_at', SORTABLE[1][1])}
              <th>Labels</th>
              <th>State</th>
              <th>Organization</th>
              ${sortHeader('created_at', SORTABLE[2][1])}
            </tr>
          </thead>
          <tbody>
            ${view.page.devices.map((d) => deviceRow(d, context.now))}
          </tbody>
        </table>
      </div>
      ${view.page.devices.length === 0 && (filtered ? html`<p class="muted">No device matches.</p>` : firstDeviceSteps())}
      <nav class="pager">
        ${q.cursor !== undefined && html`<a href="${link({ cursor: undefined })}">First page</a>`}
        ${view.page.next_cursor !== null && html`<a rel="next" href="${link({ cursor: view.page.next_cursor })}">Next page</a>`}
      </nav>`,
    'devices',
  );
}

function deviceRow(d: DeviceListItem, now: Date): Html {
  return html`<tr data-device="${d.device_id}">
    <td class="host">
      <a href="${CONSOLE_PREFIX}/devices/${d.device_id}">${d.hostname ?? html`<span class="muted">(${d.device_id})</span>`}</a>
      ${d.name && html`<br /><span class="muted">${d.name}</span>`}
    </td>
    <td class="failing" data-failing="${d.failing_checks}">
      ${d.failing_checks === 0 ? html`<span class="muted">0</span>` : html`<strong>${d.failing_checks}</strong>`}
    </td>
    <td class="checks">${checkCells(d)}</td>
    <td>${d.platform}${d.os_version && html`<br /><span class="muted">${d.os_version}</span>`}</td>
    <td>${d.agent_version}</td>
    <td>${when(d.last_seen_at, now)}</td>
    <td>${Object.entries(d.labels).map(([key, value]) => html`<code class="label">${key}=${value}</code> `)}</td>
    <td>
      ${status(d.state)}${d.duplicate_of && html` <span class="status status-duplicate" title="Another record reports the same hardware UUID">duplicate</span>`}
    </td>
    <td>${d.org}</td>
    <td>${when(d.created_at, now)}</td>
  </tr>`;
}

/**
 * Each check's latest status as a short cell: the official checks in their order, then the others;
 * a FAIL in grace or excepted has its own colour and says so (listedStatus).
 */
function checkCells(device: DeviceListItem): Html {
  const { checks } = device;
  const cellClass = (key: string) =>
    device.in_grace.includes(key) ? 'in-grace' : device.excepted.includes(key) ? 'excepted' : checks[key]!.toLowerCase();
  const keys = [
    ...CHECK_KEYS.filter((key) => Object.hasOwn(checks, key)),
    ...Object.keys(checks)
      .filter((key) => !CHECK_KEYS.includes(key as never))
      .sort(),
  ];
  if (keys.length === 0) return html`<span class="muted">no results</span>`;
  return html`<span class="cells"
    >${keys.map(
      (key) =>
        html`<span
          class="cell status-${cellClass(key)}"
          title="${key}: ${listedStatus(device, key)}"
          data-check="${key}"
          data-status="${checks[key]}"
          >${CHECK_ABBREVIATIONS[key] ?? key.slice(0, 3)}</span
        >`,
    )}</span
  >`;
}

/** Evidence as a definition list of its fields (nested values as compact JSON). */
function evidenceList(evidence: Record<string, unknown> | null): Html {
  if (evidence === null || Object.keys(evidence).length === 0) return html`<span class="muted">no evidence</span>`;
  return html`<dl class="evidence">
    ${Object.entries(evidence).map(
      ([key, value]) =>
        html`<dt>${key}</dt>
          <dd>${typeof value === 'string' ? value : JSON.stringify(value)}</dd>`,
    )}
  </dl>`;
}

/** One check's latest result; the device's user (the device page) sees neither the fleet's fix nor the history. */
/** The device page's reader: the admin of the console, or the device's user with the admin's exception of the check, if any. */
type Reader = 'admin' | { user: { exception?: { reason: string; expires_at: string } } };

function resultBlock(result: LatestView, now: Date, reader: Reader = 'admin'): Html {
  const r = result.remediation;
  const admin = reader === 'admin';
  const exception = reader !== 'admin' && result.excepted_until !== undefined ? reader.user.exception : undefined;
  return html`<article class="result result-${result.status.toLowerCase()}" id="check-${result.check_key}">
    <h3>
      ${result.check_key} ${status(result.status)} ${r.word && html`<code>${r.word}</code>`}
      ${result.excepted_until && html`<span class="status status-excepted">excepted until ${result.excepted_until}</span>`}
      ${result.in_grace_until && html`<span class="status status-in-grace">in grace until ${result.in_grace_until}</span>`}
    </h3>
    ${result.failing_since && html`<p class="since">Failing since ${when(result.failing_since, now)}</p>`}
    <p class="summary">${r.summary}</p>
    ${exception && html`<p class="note exception">Your admin accepts this until ${when(exception.expires_at, now)}: ${exception.reason}</p>`}
    ${
      result.status !== 'PASS' &&
      html`<details open>
          <summary>How to fix it on this device</summary>
          <p class="prose">${withCodeSpans(r.fix)}</p>
        </details>
        ${
          admin &&
          html`<details>
            <summary>How to fix it for the fleet</summary>
            <p class="prose">${withCodeSpans(r.admin)}</p>
          </details>`
        }`
    }
    <details>
      <summary>Evidence</summary>
      ${evidenceList(result.evidence)}
    </details>
    <p class="muted">
      Observed ${when(result.observed_at, now)}, received ${when(result.received_at, now)}
      ${admin && html` · <a href="?check=${encodeURIComponent(result.check_key)}#history">history</a>`}
    </p>
  </article>`;
}

/** Latest results with failing checks first, then unknown, not applicable and passing ones, each by check key. */
function failingFirst(latest: readonly LatestView[]): LatestView[] {
  const order = ['FAIL', 'UNKNOWN', 'NOT_APPLICABLE', 'PASS'];
  return [...latest].sort((a, b) => order.indexOf(a.status) - order.indexOf(b.status) || a.check_key.localeCompare(b.check_key));
}

export function devicePage(
  context: PageContext,
  view: {
    device: DeviceView;
    history: { log: PostureHistory } | { changes: StatusChanges };
    check: string | undefined;
    exceptions?: Html;
    labels?: Html;
  },
): Html {
  const d = view.device;
  const fields: [string, Interpolation][] = [
    ['Device ID', html`<code>${d.device_id}</code>`],
    ['Organization', d.org],
    ['Name', d.name],
    ['State', status(d.state)],
    ['Hostname', d.hostname],
    ['Platform', d.platform],
    ['OS version', d.os_version],
    ['Agent version', d.agent_version],
    ['Hardware UUID', d.hardware_uuid],
    ['Serial number', d.serial_number],
    ['Created', when(d.created_at, context.now)],
    ['Enrolled', when(d.enrolled_at, context.now)],
    ['Activated', when(d.activated_at, context.now)],
    ['Last seen', when(d.last_seen_at, context.now)],
    ['Revoked', when(d.revoked_at, context.now)],
    ['Enrollment token expires', d.token_expires_at && when(d.token_expires_at, context.now)],
    ['Enrolled with secret', d.enroll_secret_id && html`<code>${d.enroll_secret_id}</code>`],
  ];
  const latest = failingFirst(d.latest);
  const base = `${CONSOLE_PREFIX}/devices/${d.device_id}`;
  return layout(
    d.hostname ?? d.device_id,
    context,
    html`<h1>${d.hostname ?? d.device_id} ${status(d.state)}</h1>
      <dl class="identity">
        ${fields
          .filter(([, v]) => v !== null && v !== undefined)
          .map(
            ([k, v]) =>
              html`<dt>${k}</dt>
                <dd>${v}</dd>`,
          )}
      </dl>
      ${lineage(d, context.now)}
      ${d.state !== 'REVOKED' && html`<p><a class="danger button" href="${base}/revoke">Revoke this device…</a></p>`}
      <h2>Latest result of each check</h2>
      ${latest.length === 0 ? html`<p class="muted">No posture results yet.</p>` : latest.map((r) => resultBlock(r, context.now))}
      ${view.labels} ${view.exceptions} ${historySection(view.history, base, view.check, context.now)}`,
    'devices',
  );
}

/** A status change's status before ("first": the check's first result); nothing for a raw log's row. */
function changedFrom(row: PostureView | StatusChange): Html | null {
  if (!('previous_status' in row)) return null;
  return row.previous_status === null ? html`<span class="muted">first</span> → ` : html`${status(row.previous_status)} → `;
}

/** The device's history: its status changes (when each was observed), or, one click away, the raw log of every result received. */
function historySection(
  history: { log: PostureHistory } | { changes: StatusChanges },
  base: string,
  check: string | undefined,
  now: Date,
): Html {
  const isLog = 'log' in history;
  const query = (params: Record<string, string | number | undefined>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries({ check, ...(isLog ? { log: '1' } : {}), ...params }))
      if (value !== undefined) search.set(key, String(value));
    const text = search.toString();
    return `${base}${text ? `?${text}` : ''}#history`;
  };
  const rows = isLog ? history.log.results : history.changes.changes;
  const next = isLog ? history.log.next_before : history.changes.next_before;
  return html`<h2 id="history">${isLog ? 'Every result received' : 'Status changes'}${check && html` of ${check}`}</h2>
    <p>
      ${check && html`<a href="${query({ check: undefined })}">All checks</a> · `}${CHECK_KEYS.map((c) => html`<a href="${query({ check: c })}">${c}</a> `)}
    </p>
    <p>
      ${
        isLog
          ? html`<a id="history-changes" href="${query({ log: undefined })}">Show status changes only</a>`
          : html`Each change of a check's status, when the agent observed it.
              <a id="history-log" href="${query({ log: '1' })}">Show every result received (raw log)</a>`
      }
    </p>
    <div class="scroll">
      <table class="history">
        <thead>
          <tr>
            <th>${isLog ? 'Received' : 'Observed'}</th>
            <th>Check</th>
            <th>${isLog ? 'Status' : 'Change'}</th>
            <th>Rule or reason</th>
            <th>Summary</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (r) =>
              html`<tr>
                <td>${when(isLog ? r.received_at : r.observed_at, now)}</td>
                <td>${r.check_key}</td>
                <td>${changedFrom(r)}${status(r.status)}</td>
                <td><code>${r.remediation.word}</code></td>
                <td>${r.remediation.summary}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${next !== null && html`<p><a href="${query({ before: next })}">${isLog ? 'Older results' : 'Older changes'}</a></p>`}`;
}

/** Re-enrollment and clones (deviceLifecycle.ts, decideRegistration): the records linked to this one. */
function lineage(d: DeviceView, now: Date): Html {
  const link = (id: string) => html`<a href="${CONSOLE_PREFIX}/devices/${id}"><code>${id}</code></a>`;
  return html`${d.supersedes && html`<p class="note">Re-enrolled on ${when(d.created_at, now)}: this machine's previous record is ${link(d.supersedes)}.</p>`}
  ${d.superseded_by && html`<p class="note">Re-enrolled on ${when(d.revoked_at, now)}: replaced by ${link(d.superseded_by)}; this record keeps its history.</p>`}
  ${
    d.duplicate_of &&
    html`<p class="warning" role="note">
      Duplicate: ${link(d.duplicate_of)} reported the same hardware UUID from another host while this one was live (a cloned machine or
      image?). Revoke the one that should not exist; the other then takes the hardware UUID at its next heartbeat.
    </p>`
  }`;
}

export function revokePage(context: PageContext, device: DeviceView): Html {
  return layout(
    'Revoke a device',
    context,
    html`<h1>Revoke ${device.hostname ?? device.device_id}?</h1>
      <p>
        Its API key and any unused enrollment token stop working at once. The agent wipes its key at its next contact; the device's results
        stay here. This cannot be undone: the device would need a new enrollment.
      </p>
      <form method="post" action="${CONSOLE_PREFIX}/devices/${device.device_id}/revoke">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">Revoke ${device.hostname ?? device.device_id}</button>
        <a href="${CONSOLE_PREFIX}/devices/${device.device_id}">Cancel</a>
      </form>`,
    'devices',
  );
}

export const TOKEN_LIFETIMES = [
  ['1h', 'one hour', 3_600],
  ['1d', 'one day', 86_400],
  ['7d', 'seven days', 7 * 86_400],
  ['30d', 'thirty days', 30 * 86_400],
] as const;

export function enrollPage(context: PageContext, error?: string): Html {
  const org = context.principal?.orgName;
  return layout(
    'Enroll a device',
    context,
    html`<h1>Enroll a device</h1>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <form method="post" action="${CONSOLE_PREFIX}/enroll" class="stack">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <label
          >Organization <input name="org" value="${org ?? ''}" ${org ? html`readonly` : html`placeholder="e.g. acme"`} required
        /></label>
        <label>Label <input name="name" placeholder="e.g. Alice's laptop" maxlength="128" /></label>
        <label
          >Token lifetime
          <select name="ttl">
            ${TOKEN_LIFETIMES.map(([value, label]) => html`<option value="${value}" ${value === '7d' ? html` selected` : ''}>${label}</option>`)}
          </select></label
        >
        <button type="submit">Create the device and its enrollment token</button>
      </form>`,
    'enroll',
  );
}

export function enrolledPage(context: PageContext, created: CreatedDevice, qrSvg: Html, ways: EnrollWay[]): Html {
  return layout(
    'Device created',
    context,
    html`<h1>Device created</h1>
      <p>
        <a href="${CONSOLE_PREFIX}/devices/${created.device_id}">${created.device_id}</a> in organization ${created.org}, PENDING until the
        agent enrolls.
      </p>
      <p class="warning" role="note">
        The token and the link are shown on this page only, once. They are single-use secrets: give them only to the device they are for.
        The token expires ${when(created.token_expires_at, context.now)}.
      </p>
      <div class="enroll">
        <div>
          <h2>Enrollment link</h2>
          <pre class="copy" id="enrollment-link">${created.enrollment_link}</pre>
          <h2>Token</h2>
          <pre class="copy" id="enrollment-token">${created.enrollment_token}</pre>
          <p>Server URL: <code>${created.server_url}</code></p>
        </div>
        <figure class="qr">
          ${qrSvg}
          <figcaption>The enrollment link as a QR code</figcaption>
        </figure>
      </div>
      <h2>Commands</h2>
      ${ways.map(
        (w) =>
          html`<section class="way">
            <h3>${w.os}: ${w.way}</h3>
            <pre class="copy">${w.text}</pre>
            ${w.note && html`<p class="muted">${w.note}</p>`}
          </section>`,
      )}`,
    'enroll',
  );
}

/** "Device created" once its token was shown (or on another browser): the token is not kept, so it is not shown again. */
export function createdOncePage(context: PageContext, device: { id: string; orgName: string; state: string }): Html {
  return layout(
    'Device created',
    context,
    html`<h1>Device created</h1>
      <p><a href="${CONSOLE_PREFIX}/devices/${device.id}">${device.id}</a> in organization ${device.orgName}, ${device.state}.</p>
      <p class="note" id="token-shown-once">
        Its enrollment token and link were shown once, when the device was created, and are kept nowhere: they cannot be shown again. If
        they were not handed on, revoke this device and <a href="${CONSOLE_PREFIX}/enroll">create another</a>.
      </p>`,
    'enroll',
  );
}

/**
 * "My device" (src/server/devicePage.ts): one device's latest results for the person using it,
 * failing ones first with this device's fix steps; who manages it and how to reach them.
 */
/** How often the device page reloads itself while a "check again" request waits for its results. */
const CHECK_AGAIN_RELOAD_SECONDS = 10;

export function myDevicePage(view: DevicePageView, now: Date, settings: { heartbeatIntervalSeconds: number; notice?: string }): Html {
  const d = view.device;
  const latest = failingFirst(d.latest);
  const failing = latest.filter((r) => r.status === 'FAIL').length;
  const lastReport = d.latest.reduce<string | null>((last, r) => (last === null || r.received_at > last ? r.received_at : last), null);
  const asked = view.check_requested_at;
  const waiting = asked !== null && (lastReport === null || lastReport < asked);
  return documentOf(
    `My device · ${d.hostname ?? d.device_id}`,
    html`<header><span class="brand">My device</span></header>`,
    html`<h1>${d.hostname ?? d.device_id}</h1>
      <p class="${failing > 0 ? 'error' : 'muted'}" id="verdict">
        ${failing === 0 ? 'No check fails on this device.' : `${failing} ${failing === 1 ? 'check fails' : 'checks fail'} on this device.`}
      </p>
      <dl class="identity">
        <dt>Managed by</dt>
        <dd id="organization">${d.org}</dd>
        <dt>Your admin</dt>
        <dd id="contact">${view.contact ?? html`<span class="muted">your organization has not said how to reach its admin here</span>`}</dd>
        <dt>Platform</dt>
        <dd>${d.platform} ${d.os_version}</dd>
        <dt>Last reported</dt>
        <dd id="last-report">${when(lastReport, now)}</dd>
        <dt>Last seen</dt>
        <dd>${when(d.last_seen_at, now)}</dd>
      </dl>
      <section id="check-again">
        ${settings.notice && html`<p class="error" id="notice">${settings.notice}</p>`}
        ${
          waiting
            ? html`<p class="warning" id="check-again-status">
                You asked for a new check ${when(asked, now)}. Your device picks the request up when it next checks in with the server
                (every ${interval(settings.heartbeatIntervalSeconds)}, while it is on and online), checks at once and reports. This page
                reloads itself until the new results are here.
              </p>`
            : html`${
                  asked !== null &&
                  html`<p class="note" id="check-again-status">
                    These are the results of the new check you asked for ${when(asked, now)}.
                  </p>`
                }
                <form method="post" action="${CHECK_AGAIN_PATH}" class="inline">
                  <button type="submit" id="check-again-button">Check again</button>
                </form>
                <p class="hint">
                  Fixed something? Check again: your device runs its checks when it next checks in with the server (every
                  ${interval(settings.heartbeatIntervalSeconds)}). On the device, <code>device-agent check --report</code> checks and
                  reports at once.
                </p>`
        }
      </section>
      <h2>Checks</h2>
      ${
        latest.length === 0
          ? html`<p class="muted">This device has not reported any check yet.</p>`
          : latest.map((r) => resultBlock(r, now, { user: { exception: view.exceptions.get(r.check_key) } }))
      }`,
    waiting && html`<meta http-equiv="refresh" content="${CHECK_AGAIN_RELOAD_SECONDS}" />`,
  );
}

/** A heartbeat interval as the page says it: "5 minutes", "90 seconds". */
function interval(seconds: number): string {
  const [count, unit] = seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return count === 1 ? unit : `${count} ${unit}s`;
}

/** A used, expired or unknown link, or an ended page session: what to do, nothing else. */
export function devicePageExpired(): Html {
  return documentOf(
    'Link expired · My device',
    html`<header><span class="brand">My device</span></header>`,
    html`<h1>This link has expired</h1>
      <p>Links to this page work once, for a few minutes. Run <code>device-agent my-device</code> again.</p>`,
  );
}
