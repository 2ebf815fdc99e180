// The console's webhook pages: the list with the form to add one and the delivery log, and the page
// that shows a new webhook's signing secret once. Server-rendered through html.ts like every other page.
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS, type CreatedWebhook, type DeliveryView, type WebhookView } from '../webhooks';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, layout, status, when, type PageContext } from './pages';

export const WEBHOOKS_PATH = `${CONSOLE_PREFIX}/webhooks`;

export function webhooksPage(
  context: PageContext,
  view: { webhooks: readonly WebhookView[]; deliveries: readonly DeliveryView[] },
  error?: string,
): Html {
  const org = context.principal?.orgName;
  return layout(
    'Webhooks',
    context,
    html`<h1>Webhooks</h1>
      <p>
        Tell a chat channel or a ticketing system when a device starts failing a check (once the check's grace period in the policy has
        passed), recovers, goes stale or enrolls again. Each request is signed with the webhook's secret
        (<code>X-Device-Agent-Signature</code>), retried with a growing delay when the receiver does not answer 2xx, and listed below.
        Evidence is sent only when you ask for it.
      </p>
      <h2>Add a webhook</h2>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <form method="post" action="${WEBHOOKS_PATH}" class="stack">
        <input type="hidden" name="_csrf" value="${context.csrfToken}" />
        <label
          >Organization <input name="org" value="${org ?? ''}" ${org ? html`readonly` : html`placeholder="e.g. acme"`} required
        /></label>
        <label>URL <input name="url" type="url" required placeholder="https://hooks.slack.com/services/…" /></label>
        <label
          >Format
          <select name="format">
            ${WEBHOOK_FORMATS.map((f) => html`<option value="${f}">${f === 'json' ? 'JSON (generic)' : 'Slack incoming webhook'}</option>`)}
          </select></label
        >
        <fieldset>
          <legend>Events</legend>
          ${WEBHOOK_EVENTS.map((e) => html`<label class="inline"><input type="checkbox" name="event_${e}" value="yes" checked /> ${e}</label> `)}
        </fieldset>
        <label class="inline"
          ><input type="checkbox" name="include_evidence" value="yes" /> Include the check's evidence (JSON format)</label
        >
        <button type="submit">Add the webhook</button>
      </form>
      <h2>Webhooks</h2>
      ${
        view.webhooks.length === 0
          ? html`<p class="muted">No webhooks yet.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>Webhook</th>
                  <th>Organization</th>
                  <th>URL</th>
                  <th>Format</th>
                  <th>Events</th>
                  <th>Evidence</th>
                  <th>Created</th>
                  <th></th>
                </tr>
              </thead>
              <tbody>
                ${view.webhooks.map(
                  (w) =>
                    html`<tr data-webhook="${w.webhook_id}">
                      <td><code>${w.webhook_id}</code></td>
                      <td>${w.org}</td>
                      <td>${w.url}</td>
                      <td>${w.format}</td>
                      <td>${w.events.join(', ')}</td>
                      <td>${w.include_evidence ? 'yes' : 'no'}</td>
                      <td>${when(w.created_at, context.now)}</td>
                      <td>
                        <form method="post" action="${WEBHOOKS_PATH}/${w.webhook_id}/delete" class="inline">
                          <input type="hidden" name="_csrf" value="${context.csrfToken}" />
                          <input type="hidden" name="confirm" value="yes" />
                          <button type="submit" class="danger">Delete</button>
                        </form>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>Delivery log</h2>
      ${
        view.deliveries.length === 0
          ? html`<p class="muted">Nothing sent yet.</p>`
          : html`<table class="deliveries">
              <thead>
                <tr>
                  <th>Queued</th>
                  <th>Event</th>
                  <th>Device</th>
                  <th>Webhook</th>
                  <th>State</th>
                  <th>Attempts</th>
                  <th>Last answer</th>
                  <th>Next attempt</th>
                </tr>
              </thead>
              <tbody>
                ${view.deliveries.map(
                  (d) =>
                    html`<tr data-delivery="${d.delivery_id}">
                      <td>${when(d.created_at, context.now)}</td>
                      <td><code>${d.event_type}</code></td>
                      <td>
                        ${d.device_id === null ? '' : html`<a href="${CONSOLE_PREFIX}/devices/${d.device_id}"><code>${d.device_id}</code></a>`}
                      </td>
                      <td><code>${d.webhook_id}</code></td>
                      <td>${status(d.state)}</td>
                      <td>${d.attempts}</td>
                      <td>${d.last_status ?? ''} ${d.last_error ?? ''}</td>
                      <td>${d.next_attempt_at === null ? '' : when(d.next_attempt_at, context.now)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }`,
    'webhooks',
  );
}

export function createdWebhookPage(context: PageContext, created: CreatedWebhook): Html {
  return layout(
    'Webhook added',
    context,
    html`<h1>Webhook added</h1>
      <p><code>${created.webhook_id}</code> for organization ${created.org}: ${created.format}, ${created.events.join(', ')}.</p>
      <p class="warning" role="note">
        The signing secret is shown on this page only, once. Give it to the receiver, which checks each request's
        <code>X-Device-Agent-Signature</code> (the HMAC-SHA256 of the timestamp, a dot and the body) and refuses an old
        <code>X-Device-Agent-Timestamp</code>.
      </p>
      <h2>Signing secret</h2>
      <pre class="copy" id="webhook-secret">${created.secret}</pre>
      <p><a href="${WEBHOOKS_PATH}">Back to the webhooks</a></p>`,
    'webhooks',
  );
}
