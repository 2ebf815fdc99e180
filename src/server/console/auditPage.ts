// The console's audit log page: admin actions newest first, fifty a page, filtered by action,
// with a CSV download of the same (the admin API's `GET /audit?format=csv`).
import { AUDIT_ACTIONS, type AuditPage } from '../audit';
import { ADMIN_API_PREFIX } from '../routes/adminApi';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, layout, when, type PageContext } from './pages';

export const AUDIT_PATH = `${CONSOLE_PREFIX}/audit`;

export function auditPage(context: PageContext, view: { action: string | undefined; before: number | undefined; page: AuditPage }): Html {
  const { action, page } = view;
  const filter = action === undefined ? '' : `action=${encodeURIComponent(action)}`;
  const link = (before: number | null) => `${AUDIT_PATH}?${[filter, before === null ? '' : `before=${before}`].filter(Boolean).join('&')}`;
  return layout(
    'Audit log',
    context,
    html`<h1>Audit log</h1>
      <p>
        What admins did, newest first: who (a console account, an admin API token, or <code>cli:</code> and the operating-system user of the
        admin CLI), when, what, and from which address. Kept as long as posture results (<code>--retention</code>).
      </p>
      <form method="get" action="${AUDIT_PATH}" class="filters">
        <label
          >Action
          <select name="action">
            <option value="">any</option>
            ${AUDIT_ACTIONS.map((a) => html`<option value="${a}" ${a === action ? html` selected` : ''}>${a}</option>`)}
          </select></label
        >
        <button type="submit">Filter</button> <a href="${AUDIT_PATH}">Clear</a>
        <a href="${ADMIN_API_PREFIX}/audit?${[filter, 'format=csv'].filter(Boolean).join('&')}" download>Download CSV</a>
      </form>
      <table class="audit">
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>Action</th>
            <th>Organization</th>
            <th>Target</th>
            <th>Details</th>
            <th>From</th>
          </tr>
        </thead>
        <tbody>
          ${page.entries.map(
            (e) =>
              html`<tr data-audit="${e.id}">
                <td>${when(e.at, context.now)}</td>
                <td>${e.actor}</td>
                <td><code>${e.action}</code></td>
                <td>${e.org ?? html`<span class="muted">—</span>`}</td>
                <td>${e.target_id === null ? html`<span class="muted">—</span>` : html`${e.target_type} <code>${e.target_id}</code>`}</td>
                <td>${e.detail === null ? '' : Object.entries(e.detail).map(([k, v]) => html`${k}=${String(v)} `)}</td>
                <td>${e.address ?? html`<span class="muted">CLI</span>`}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${page.entries.length === 0 && html`<p class="muted">No entry matches.</p>`}
      <nav class="pager">
        ${view.before !== undefined && html`<a href="${link(null)}">Newest</a>`}
        ${page.next_before !== null && html`<a rel="next" href="${link(page.next_before)}">Older</a>`}
      </nav>`,
    'audit',
  );
}
