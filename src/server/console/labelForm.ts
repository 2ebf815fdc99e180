// The console's form for a device's labels (src/server/deviceLabels.ts), on its page: the whole set,
// one key=value a line, under the rules of an enrollment secret's labels. A refused form comes back
// with why and what was typed; nothing is stored.
import type { Labels } from '../db/store';
import { html, type Html } from './html';
import { CONSOLE_PREFIX, type PageContext } from './pages';

/** What the form was given, shown again when it is refused. */
export interface LabelsFormState {
  error?: string;
  text?: string;
}

export function labelsSection(context: PageContext, device: { device_id: string; labels: Labels }, form: LabelsFormState = {}): Html {
  const current = Object.entries(device.labels).map(([key, value]) => `${key}=${value}`);
  return html`<section id="labels">
    <h2>Labels</h2>
    <p class="muted">
      Label refinements of the policy and label exceptions apply to the devices carrying their label. A device gets its labels from the
      enrollment secret it registered with, or here. A change reaches the device at its next heartbeat: the organization's policy version
      moves, and the device fetches its policy again.
    </p>
    ${form.error && html`<p class="error" role="alert">${form.error}</p>`}
    <form method="post" action="${CONSOLE_PREFIX}/devices/${encodeURIComponent(device.device_id)}/labels" class="stack">
      <input type="hidden" name="_csrf" value="${context.csrfToken}" />
      <label
        >Labels (one key=value a line; empty: none)
        <textarea name="labels" rows="4" placeholder="e.g. team=finance">${form.text ?? current.join('\n')}</textarea>
      </label>
      <button type="submit">Save the labels</button>
    </form>
  </section>`;
}
