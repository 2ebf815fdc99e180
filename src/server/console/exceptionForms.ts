// The console's policy exceptions (src/server/exceptions.ts): the exceptions in force as a table,
// each with a button that ends it now, and the form that grants one, for one device (on its page)
// or for every device with a label (on the policy page). Validation is grantException's, shared
// with the CLI and the admin API; a refused form comes back with why and what was typed.
import { CHECK_KEYS } from '../../protocol/constants';
import type { ExceptionView } from '../exceptions';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, type PageContext } from './pages';

export const EXCEPTIONS_PATH = `${CONSOLE_PREFIX}/exceptions`;

/** What the grant form was given, shown again when it is refused. */
export interface ExceptionFormState {
  error?: string;
  values?: Record<string, string | undefined>;
}

/** Where the exceptions are shown and granted: one device's page, or an organization's policy page. */
type ExceptionTarget = { device: string; org: string } | { org: string };

function grantAction(target: ExceptionTarget): string {
  return 'device' in target
    ? `${CONSOLE_PREFIX}/devices/${encodeURIComponent(target.device)}/exceptions`
    : `${EXCEPTIONS_PATH}?org=${encodeURIComponent(target.org)}`;
}

export function exceptionsSection(
  context: PageContext,
  target: ExceptionTarget,
  exceptions: readonly ExceptionView[],
  form: ExceptionFormState = {},
): Html {
  const values = form.values ?? {};
  const forDevice = 'device' in target;
  return html`<section id="exceptions">
    <h2>Exceptions</h2>
    <p class="muted">
      An exception accepts one check's FAIL ${forDevice ? 'on this device' : 'on every device of the organization with a label'} until it
      ends: the agent still reports the true status, and the overview counts it apart. It lapses by itself.
    </p>
    ${
      exceptions.length === 0
        ? html`<p class="muted">No exception in force.</p>`
        : html`<table class="exceptions">
            <thead>
              <tr>
                <th>Check</th>
                <th>Applies to</th>
                <th>Reason</th>
                <th>Until</th>
                <th>Granted by</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${exceptions.map(
                (e) =>
                  html`<tr data-exception="${e.exception_id}">
                    <td><code>${e.check_key}</code></td>
                    <td>${e.label === null ? html`device <code>${e.device_id}</code>` : html`devices with <code>${e.label}</code>`}</td>
                    <td>${e.reason}</td>
                    <td>${e.expires_at}</td>
                    <td>${e.created_by}</td>
                    <td>
                      <form method="post" action="${EXCEPTIONS_PATH}/${e.exception_id}/remove" class="inline">
                        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
                        <input type="hidden" name="org" value="${e.org}" />
                        ${forDevice && html`<input type="hidden" name="device" value="${target.device}" />`}
                        <button type="submit" class="danger">End now</button>
                      </form>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h3>Grant an exception${forDevice ? ' for this device' : ' for a label'}</h3>
    ${form.error && html`<p class="error" role="alert">${form.error}</p>`}
    <form method="post" action="${grantAction(target)}" class="stack">
      <input type="hidden" name="_csrf" value="${context.csrfToken}" />
      ${
        !forDevice &&
        html`<label>Label (key=value) <input name="label" value="${values.label ?? ''}" placeholder="e.g. site=remote" required /></label>`
      }
      <label
        >Check
        <select name="check" required>
          ${CHECK_KEYS.map((key) => html`<option value="${key}" ${key === values.check ? html` selected` : ''}>${key}</option>`)}
        </select></label
      >
      <label>Reason <input name="reason" value="${values.reason ?? ''}" maxlength="500" required /></label>
      <label
        >Until (a date, or a duration such as 30d; at most a year)
        <input name="expires" value="${values.expires ?? ''}" placeholder="e.g. 30d or 2027-03-31" required
      /></label>
      <button type="submit">Grant the exception</button>
    </form>
  </section>`;
}
