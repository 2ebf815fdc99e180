// The console's enrollment-secret pages (issue 28): the list with use counts and the form to
// create one, the page that shows a new secret once with its install commands, and the revocation
// confirmation. Server-rendered through html.ts like every other page.
import type { CreatedSecret, SecretView } from '../enrollSecrets';
import type { EnrollWay } from './enrollInstructions';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, layout, status, when, type PageContext } from './pages';

export const SECRETS_PATH = `${CONSOLE_PREFIX}/secrets`;

/** The expiry choices of the form: [value, label, seconds]; '' is none. */
export const SECRET_LIFETIMES = [
  ['', 'never', undefined],
  ['1d', 'one day', 86_400],
  ['7d', 'seven days', 7 * 86_400],
  ['30d', 'thirty days', 30 * 86_400],
  ['90d', 'ninety days', 90 * 86_400],
  ['365d', 'one year', 365 * 86_400],
] as const;

export function secretsPage(context: PageContext, secrets: readonly SecretView[], error?: string): Html {
  const org = context.principal?.orgName;
  return layout(
    'Enrollment secrets',
    context,
    html`<h1>Enrollment secrets</h1>
      <p>
        One secret enrolls a whole fleet: the same package and configuration on every machine (MDM, GPO, Ansible). Each machine that
        registers with it gets its own device record, with the secret's labels. Revoke a secret the moment it leaks: devices it registered
        keep working.
      </p>
      <h2>Create a secret</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <form method="post" action="${SECRETS_PATH}" class="stack">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <label
          >Organization <input name="org" value="${org ?? ''}" ${org ? html`readonly` : html`placeholder="e.g. acme"`} required
        /></label>
        <label
          >Expires
          <select name="expires">
            ${SECRET_LIFETIMES.map(([value, label]) => html`<option value="${value}" ${value === '30d' ? html` selected` : ''}>${label}</option>`)}
          </select></label
        >
        <label>At most this many devices <input name="max_uses" type="number" min="1" placeholder="no cap" /></label>
        <label>Labels, one key=value per line <textarea name="labels" rows="3" placeholder="team=finance"></textarea></label>
        <label>Note <input name="note" maxlength="256" placeholder="e.g. finance laptops, Intune" /></label>
        <button type="submit">Create the secret</button>
      </form>
      <h2>Secrets</h2>
      ${
        secrets.length === 0
          ? html`<p class="muted">No enrollment secrets yet.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>Secret</th>
                  <th>Organization</th>
                  <th>Status</th>
                  <th>Devices</th>
                  <th>Expires</th>
                  <th>Labels</th>
                  <th>Note</th>
                  <th>Created</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${secrets.map((s) => secretRow(context, s))}
              </tbody>
            </table>`
      }`,
    'secrets',
  );
}

function secretRow(context: PageContext, s: SecretView): Html {
  return html`<tr data-secret="${s.secret_id}">
    <td><code>${s.secret_id}</code></td>
    <td>${s.org}</td>
    <td>${status(s.status)}</td>
    <td class="uses">${s.uses}${s.max_uses !== null && html` of ${s.max_uses}`}</td>
    <td>${s.expires_at === null ? html`<span class="muted">never</span>` : when(s.expires_at, context.now)}</td>
    <td>${Object.entries(s.labels).map(([key, value]) => html`<code>${key}=${value}</code> `)}</td>
    <td>${s.note}</td>
    <td>${when(s.created_at, context.now)}</td>
    <td>
      ${
        s.status !== 'revoked' &&
        html`<form method="post" action="${SECRETS_PATH}/${s.secret_id}/revoke" class="inline">
          <input type="hidden" name="_csrf" value="${context.csrfToken}" />
          <input type="hidden" name="confirm" value="yes" />
          <button type="submit" class="danger">Revoke</button>
        </form>`
      }
    </td>
  </tr>`;
}

export function createdSecretPage(context: PageContext, created: CreatedSecret, org: string, ways: readonly EnrollWay[]): Html {
  return layout(
    'Enrollment secret created',
    context,
    html`<h1>Enrollment secret created</h1>
      <p>
        <code>${created.secret_id}</code> for organization ${org}:
        ${created.max_uses === null ? 'no cap on devices' : html`at most ${created.max_uses} devices`},
        ${created.expires_at === null ? 'no expiry' : html`expires ${when(created.expires_at, context.now)}`}.
      </p>
      <p class="warning" role="note">
        The secret is shown on this page only, once (only its hash is stored). Keep it where your MDM or configuration management keeps
        secrets; anyone who has it can register devices in ${org} until it expires, is used up or is revoked.
      </p>
      <h2>Secret</h2>
      <pre class="copy" id="enroll-secret">${created.enroll_secret}</pre>
      <h2>Install commands</h2>
      ${ways.map(
        (w) =>
          html`<section class="way">
            <h3>${w.os}: ${w.way}</h3>
            <pre class="copy">${w.text}</pre>
            ${w.note && html`<p class="muted">${w.note}</p>`}
          </section>`,
      )}
      <p><a href="${SECRETS_PATH}">Back to the enrollment secrets</a></p>`,
    'secrets',
  );
}
