// Labels set by an administrator (CLI `device label`, `PUT /api/admin/v1/devices/{id}/labels`, the
// console's device page), beside those an enrollment secret gives, under the same rules
// (enrollSecrets.ts, validLabels). A change may change which label refinements of the policy the
// device is served, so it takes the organization's next policy version in its transaction
// (Store.changeDeviceLabels): the device's next heartbeat announces it, and its next fetch is
// refined by the new labels. Bad input changes nothing; the callers record the change in the audit log.
import { findDevice } from './admin';
import { labelsText } from './adminOutput';
import type { AuditEvent } from './audit';
import { sameLabels, type Labels, type OrgScope, type Store } from './db/store';
import { validLabels } from './enrollSecrets';
import { NotFoundError, UsageError } from './usage';

/** What a change asks: the whole new set (`replace`), or labels to set and keys to remove. */
export type LabelEdit = { replace: Labels } | { set: Labels; remove: readonly string[] };

export interface DeviceLabelsView {
  device_id: string;
  org: string;
  labels: Labels;
  /** The labels before the change. */
  previous: Labels;
  /** The organization's policy version after it (it moved when the labels changed). */
  policy_version: number;
}

export async function changeDeviceLabels(store: Store, scope: OrgScope, deviceId: string, edit: LabelEdit): Promise<DeviceLabelsView> {
  const device = await findDevice(store, deviceId, scope);
  const both = 'set' in edit ? edit.remove.find((key) => Object.hasOwn(edit.set, key)) : undefined;
  if (both !== undefined) throw new UsageError(`label ${both} is both set and removed`);
  // Decided and checked on the labels as they are in the change's transaction, so that two admins' changes both count.
  const changed = await store.changeDeviceLabels(device, (current) => {
    if (!('set' in edit)) return validLabels(edit.replace);
    const missing = edit.remove.find((key) => !Object.hasOwn(current, key));
    if (missing !== undefined) throw new UsageError(`the device has no label ${JSON.stringify(missing)}`);
    const kept = Object.entries(current).filter(([key]) => !edit.remove.includes(key));
    return validLabels({ ...Object.fromEntries(kept), ...edit.set });
  });
  if (changed === undefined) throw new NotFoundError(`no device ${JSON.stringify(deviceId)} in this database`);
  return {
    device_id: device.id,
    org: device.orgName,
    labels: byKey(changed.after),
    previous: changed.before,
    policy_version: changed.version,
  };
}

/** By key, as the store lists them (keys are ASCII: code-unit order is its). */
function byKey(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The audit log's entry for a change (audit.ts): none when the labels stayed as they were. */
export function labelsAuditEvent(view: DeviceLabelsView): AuditEvent | undefined {
  if (sameLabels(view.previous, view.labels)) return undefined;
  return {
    action: 'device.labels',
    org: view.org,
    target: { type: 'device', id: view.device_id },
    detail: { labels: labelsText(view.labels), previous: labelsText(view.previous), policy_version: view.policy_version },
  };
}
