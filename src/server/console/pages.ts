// The console's pages as server-rendered HTML: no script, no framework, nothing from elsewhere.
// Each function takes what the service layer returned and gives the page; routes.ts does the rest.
import { CHECK_KEYS, PLATFORMS, STATUSES } from '../../protocol/constants';
import type {
  ComplianceDay,
  ComplianceSummary,
  CreatedDevice,
  DevicePage,
  DeviceSummary,
  DeviceView,
  LatestView,
  PostureHistory,
} from '../admin';
import type { AdminPrincipal } from '../adminAccess';
import type { SignInAttempts } from '../db/store';
import { DEVICE_PAGE_PATH, type DevicePageView } from '../devicePage';
import type { FleetFailure } from '../remediation';
import { complianceChart } from './chart';
import type { EnrollWay } from './enrollInstructions';
import { html, type Html, type Interpolation } from './html';

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
function documentOf(title: string, header: Html, main: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <link rel="stylesheet" href="${STYLESHEET_PATH}" />
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

export function overviewPage(
  context: PageContext,
  view: { org: string | undefined; summary: ComplianceSummary; days: ComplianceDay[]; failures: FleetFailure[] },
): Html {
  const { summary } = view;
  const failingLink = (check: string) =>
    `${CONSOLE_PREFIX}/devices?state=ACTIVE&failing=${encodeURIComponent(check)}${view.org ? `&org=${encodeURIComponent(view.org)}` : ''}`;
  return layout(
    'Overview',
    context,
    html`<h1>Fleet overview${view.org && html` · ${view.org}`}</h1>
      ${orgPicker(context, view.org, `${CONSOLE_PREFIX}/overview`)}
      <section class="cards">
        <div class="card">
          <h2>Devices</h2>
          <p class="big">${summary.devices.total}</p>
          <p>${Object.entries(summary.devices.by_state).map(([state, n]) => html`${status(state)} ${n} `)}</p>
        </div>
        <div class="card">
          <h2>Platforms</h2>
          <ul class="plain">
            ${Object.entries(summary.devices.by_platform).map(([platform, n]) => html`<li>${platform}: ${n}</li>`)}
          </ul>
        </div>
        <div class="card">
          <h2>Presence</h2>
          <p>${summary.presence.active} active</p>
          <p>
            <a
              href="${CONSOLE_PREFIX}/devices?state=ACTIVE&last_seen_before=${new Date(context.now.getTime() - summary.presence.stale_after_seconds * 1000).toISOString()}"
              >${summary.presence.stale} stale</a
            >
            <span class="muted"
              >(not seen for ${Math.round(summary.presence.stale_after_seconds / 60)} min, twice the heartbeat interval)</span
            >
          </p>
          <p>
            <a
              href="${CONSOLE_PREFIX}/devices?state=ACTIVE&last_seen_before=${new Date(context.now.getTime() - summary.presence.offline_after_seconds * 1000).toISOString()}"
              >${summary.presence.offline} offline</a
            >
            <span class="muted">(not seen for ${summary.presence.offline_after_seconds / 86_400} days)</span>
          </p>
        </div>
      </section>
      <h2>Compliance over the last ${view.days.length} days</h2>
      ${complianceChart(view.days)}
      <h2>Compliance per check</h2>
      <p class="muted">Active devices by their latest result; a result older than twice the posture interval counts as stale.</p>
      <table>
        <thead>
          <tr>
            <th>Check</th>
            ${STATUSES.map((s) => html`<th>${status(s)}</th>`)}
            <th>missing or stale</th>
            <th>FAIL excepted</th>
            <th>FAIL in grace</th>
          </tr>
        </thead>
        <tbody>
          ${summary.checks.map(
            (c) =>
              html`<tr>
                <th scope="row">${c.check_key}</th>
                <td>${c.PASS}</td>
                <td>${c.FAIL > 0 ? html`<a href="${failingLink(c.check_key)}">${c.FAIL}</a>` : '0'}</td>
                <td>${c.UNKNOWN}</td>
                <td>${c.NOT_APPLICABLE}</td>
                <td>${c.MISSING_OR_STALE}</td>
                <td>${c.EXCEPTED}</td>
                <td>${c.IN_GRACE}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${summary.checks.length === 0 && html`<p class="muted">No posture results yet.</p>`}
      <h2>What fails, and how to fix it for the fleet</h2>
      ${view.failures.length === 0 ? html`<p class="muted">No active device fails a check.</p>` : ''}
      ${view.failures.map(
        (f) =>
          html`<article class="failure">
            <h3>
              <a href="${failingLink(f.check_key)}"
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

export interface DeviceListView {
  query: Record<string, string | undefined>;
  page: DevicePage;
}

const SORTABLE = [
  ['hostname', 'Hostname'],
  ['last_seen_at', 'Last seen'],
  ['created_at', 'Created'],
] as const;

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
    return html`<th${active ? html` aria-sort="${order === 'asc' ? 'ascending' : 'descending'}"` : ''}><a href="${link({ sort: key, order: next, cursor: undefined })}">${label}${active ? (order === 'asc' ? ' ▲' : ' ▼') : ''}</a></th>`;
  };
  const option = (value: string, current: string | undefined, label = value) =>
    html`<option value="${value}" ${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  const dateValue = (iso: string | undefined) => iso?.slice(0, 10) ?? '';
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
            ${option('', q.platform, 'any')}${PLATFORMS.map((p) => option(p, q.platform))}
          </select></label
        >
        <label
          >Failing
          <select name="failing">
            ${option('', q.failing, '—')}${option('any', q.failing, 'any check')}${CHECK_KEYS.map((c) => option(c, q.failing))}
          </select></label
        >
        <label>Hostname <input name="hostname" value="${q.hostname ?? ''}" placeholder="contains…" /></label>
        <label>Seen after <input type="date" name="last_seen_after" value="${dateValue(q.last_seen_after)}" /></label>
        <label>Not seen since <input type="date" name="last_seen_before" value="${dateValue(q.last_seen_before)}" /></label>
        <input type="hidden" name="sort" value="${sort}" /><input type="hidden" name="order" value="${order}" />
        <button type="submit">Filter</button> <a href="${CONSOLE_PREFIX}/devices">Clear</a>
      </form>
      <table class="devices">
        <thead>
          <tr>
            ${sortHeader('hostname', SORTABLE[0][1])}
            <th>Name</th>
            <th>Organization</th>
            <th>State</th>
            <th>Platform</th>
            <th>OS</th>
            ${sortHeader('last_seen_at', SORTABLE[1][1])}${sortHeader('created_at', SORTABLE[2][1])}
          </tr>
        </thead>
        <tbody>
          ${view.page.devices.map((d) => deviceRow(d, context.now))}
        </tbody>
      </table>
      ${view.page.devices.length === 0 && html`<p class="muted">No device matches.</p>`}
      <nav class="pager">
        ${q.cursor !== undefined && html`<a href="${link({ cursor: undefined })}">First page</a>`}
        ${view.page.next_cursor !== null && html`<a rel="next" href="${link({ cursor: view.page.next_cursor })}">Next page</a>`}
      </nav>`,
    'devices',
  );
}

function deviceRow(d: DeviceSummary, now: Date): Html {
  return html`<tr>
    <td><a href="${CONSOLE_PREFIX}/devices/${d.device_id}">${d.hostname ?? html`<span class="muted">(${d.device_id})</span>`}</a></td>
    <td>${d.name}</td>
    <td>${d.org}</td>
    <td>
      ${status(d.state)}${d.duplicate_of && html` <span class="status status-duplicate" title="Another record reports the same hardware UUID">duplicate</span>`}
    </td>
    <td>${d.platform}</td>
    <td>${d.os_version}</td>
    <td>${when(d.last_seen_at, now)}</td>
    <td>${when(d.created_at, now)}</td>
  </tr>`;
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
function resultBlock(result: LatestView, now: Date, reader: 'admin' | 'user' = 'admin'): Html {
  const r = result.remediation;
  const admin = reader === 'admin';
  return html`<article class="result result-${result.status.toLowerCase()}" id="check-${result.check_key}">
    <h3>
      ${result.check_key} ${status(result.status)} ${r.word && html`<code>${r.word}</code>`}
      ${result.excepted_until && html`<span class="status status-excepted">excepted until ${result.excepted_until}</span>`}
      ${result.in_grace_until && html`<span class="status status-in-grace">in grace until ${result.in_grace_until}</span>`}
    </h3>
    ${result.failing_since && html`<p class="since">Failing since ${when(result.failing_since, now)}</p>`}
    <p class="summary">${r.summary}</p>
    ${
      result.status !== 'PASS' &&
      html`<details open>
          <summary>How to fix it on this device</summary>
          <p class="prose">${r.fix}</p>
        </details>
        ${
          admin &&
          html`<details>
            <summary>How to fix it for the fleet</summary>
            <p class="prose">${r.admin}</p>
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

export function devicePage(context: PageContext, view: { device: DeviceView; history: PostureHistory; check: string | undefined }): Html {
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
      <h2 id="history">History${view.check && html` of ${view.check}`}</h2>
      <p>
        ${view.check && html`<a href="${base}#history">All checks</a> · `}${CHECK_KEYS.map((c) => html`<a href="${base}?check=${c}#history">${c}</a> `)}
      </p>
      <table>
        <thead>
          <tr>
            <th>Received</th>
            <th>Check</th>
            <th>Status</th>
            <th>Rule or reason</th>
            <th>Summary</th>
          </tr>
        </thead>
        <tbody>
          ${view.history.results.map(
            (r) =>
              html`<tr>
                <td>${when(r.received_at, context.now)}</td>
                <td>${r.check_key}</td>
                <td>${status(r.status)}</td>
                <td><code>${r.remediation.word}</code></td>
                <td>${r.remediation.summary}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${view.history.next_before !== null && html`<p><a href="${base}?${view.check ? `check=${encodeURIComponent(view.check)}&` : ''}before=${view.history.next_before}#history">Older results</a></p>`}`,
    'devices',
  );
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

/**
 * "My device" (src/server/devicePage.ts): one device's latest results for the person using it,
 * failing ones first with this device's fix steps; who manages it and how to reach them.
 */
export function myDevicePage(view: DevicePageView, now: Date): Html {
  const d = view.device;
  const latest = failingFirst(d.latest);
  const failing = latest.filter((r) => r.status === 'FAIL').length;
  const lastReport = d.latest.reduce<string | null>((last, r) => (last === null || r.received_at > last ? r.received_at : last), null);
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
      <p class="hint">
        Fixed something? Run <code>device-agent check --report</code> to check again now, then
        <a href="${DEVICE_PAGE_PATH}">reload this page</a>.
      </p>
      <h2>Checks</h2>
      ${latest.length === 0 ? html`<p class="muted">This device has not reported any check yet.</p>` : latest.map((r) => resultBlock(r, now, 'user'))}`,
  );
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
