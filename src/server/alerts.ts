// The alert sweep and the webhook dispatcher, run by `serve` every --webhook-interval (docs/server.md,
// "Webhooks"). The sweep compares, per organization with webhooks, what its devices and latest
// results say with the marks of what it raised before (alert_marks): a FAIL whose grace has passed
// (deviceLifecycle.ts's rule; an excepted FAIL waits) raises check.failing; the end of a FAIL run it
// raised, when the device is ACTIVE and the status another, raises check.recovered; an ACTIVE device
// not seen for twice the heartbeat interval raises device.stale; a record that replaced a revoked one
// raises device.reenrolled. A mark and its deliveries are written in one transaction, and a mark
// exists once: of several processes sweeping at once, one queues the event. The time-dependent events
// (grace ends, staleness) need no timer of their own: the next sweep finds them, at the cost of a few
// indexed queries per organization with webhooks.
//
// The dispatcher sends due deliveries from the outbox: each attempt is claimed first (so one process
// sends it), signed afresh (webhooks.ts), and on anything but a 2xx within 10 s retried after the
// interval, doubling up to an hour, 10 attempts in all; a delivery in flight when the server stops is
// sent again once its claim lapses (a minute): at least once, so receivers deduplicate by event id.
import type { Logger } from 'pino';
import { request } from 'undici';
import { VERSION } from '../version';
import type { AlertMark, DeviceRecord, DueDelivery, NewDelivery, Store, WebhookRecord } from './db/store';
import type { OrganizationId } from './ids';
import { graceEndsAt, graceSecondsFor } from './deviceLifecycle';
import { orgGrace } from './policy';
import { withExceptions } from './exceptions';
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  eventBody,
  newEventId,
  signature,
  type AlertEvent,
  type WebhookEvent,
} from './webhooks';

export interface AlertOptions {
  /** Time between two sweeps, and the first retry's delay. */
  intervalMs: number;
  heartbeatIntervalSeconds: number;
}

const MAX_ATTEMPTS = 10;
const MAX_BACKOFF_MS = 3_600_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** A claimed delivery is left to its claimer this long: longer than an attempt can take. */
const CLAIM_MS = 60_000;
const DUE_BATCH = 50;
const PARALLEL_SENDS = 8;
const MAX_ERROR_LENGTH = 200;

export interface AlertRunner {
  /** One sweep and one round of deliveries now (tests and the loop). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

export function startAlerts(store: Store, options: AlertOptions, logger: Logger, now: () => Date = () => new Date()): AlertRunner {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  async function runOnce(): Promise<void> {
    await sweep(store, options, now(), logger);
    await dispatch(store, options, now, logger);
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      running = runOnce()
        .catch((error: unknown) => logger.error({ err: error }, 'webhook sweep failed; retrying at the next one'))
        .finally(() => {
          if (!stopped) schedule(options.intervalMs);
        });
    }, delayMs);
  }

  schedule(0);
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

// ---- the sweep -----------------------------------------------------------------------------------

async function sweep(store: Store, options: AlertOptions, now: Date, logger: Logger): Promise<void> {
  const byOrg = new Map<OrganizationId, WebhookRecord[]>();
  for (const webhook of await store.listWebhooks(null)) byOrg.set(webhook.orgId, [...(byOrg.get(webhook.orgId) ?? []), webhook]);
  for (const [orgId, webhooks] of byOrg) {
    const queued = await sweepOrganization(store, orgId, webhooks, options, now);
    if (queued > 0) logger.info({ event: 'webhook_events', org: webhooks[0]!.orgName, events: queued }, 'webhook events queued');
  }
}

async function sweepOrganization(
  store: Store,
  orgId: OrganizationId,
  webhooks: readonly WebhookRecord[],
  options: AlertOptions,
  now: Date,
): Promise<number> {
  const staleAfterMs = 2 * options.heartbeatIntervalSeconds * 1000;
  const oldest = webhooks.map((w) => w.createdAt).sort()[0]!;
  const candidates = await store.alertCandidates(orgId, {
    staleBefore: new Date(now.getTime() - staleAfterMs).toISOString(),
    reenrolledAfter: oldest,
  });
  const grace = await orgGrace(store, orgId);
  const devices = new Map<string, Promise<DeviceRecord | undefined>>();
  const deviceOf = (id: string) => {
    if (!devices.has(id)) devices.set(id, store.findDevice(id));
    return devices.get(id)!;
  };
  let queued = 0;
  const raise = async (change: { raise: AlertMark } | { clear: AlertMark }, event: Omit<AlertEvent, 'device' | 'org'> | undefined) => {
    const mark = 'raise' in change ? change.raise : change.clear;
    const device = event === undefined ? undefined : await deviceOf(mark.deviceId);
    const deliveries = event && device ? await deliveriesFor(store, webhooks, { ...event, device, org: device.orgName }) : [];
    if (await store.recordAlert(change, deliveries, now.toISOString())) queued += deliveries.length;
  };

  for (const { mark, status, deviceState } of candidates.ended) {
    const recovered = deviceState === 'ACTIVE' && status !== null && status !== 'FAIL';
    const check = {
      checkKey: mark.subject,
      status: status ?? 'UNKNOWN',
      since: mark.since,
      graceSeconds: graceSecondsFor(grace, mark.subject),
    };
    await raise({ clear: mark }, recovered ? { type: 'check.recovered', occurredAt: now.toISOString(), check } : undefined);
  }
  for (const { deviceId, checkKey, since } of candidates.failing) {
    const graceSeconds = graceSecondsFor(grace, checkKey);
    const countsFrom = graceEndsAt(since, graceSeconds) ?? now.getTime();
    if (now.getTime() < countsFrom) continue;
    const device = await deviceOf(deviceId);
    if (!device) continue;
    // An excepted FAIL is not failing: it is looked at again at each sweep, and raised when the exception lapses.
    const [excepted] = await withExceptions(store, device, [{ check_key: checkKey, status: 'FAIL' }], now);
    if (excepted?.excepted_until !== undefined) continue;
    const mark: AlertMark = { orgId, deviceId, kind: 'failing', subject: checkKey, since };
    const occurredAt = new Date(countsFrom).toISOString();
    await raise({ raise: mark }, { type: 'check.failing', occurredAt, check: { checkKey, status: 'FAIL', since, graceSeconds } });
  }
  for (const mark of candidates.staleEnded) await raise({ clear: mark }, undefined);
  for (const { deviceId, lastSeenAt } of candidates.stale) {
    const occurredAt = new Date(Date.parse(lastSeenAt) + staleAfterMs).toISOString();
    await raise({ raise: { orgId, deviceId, kind: 'stale', subject: '', since: lastSeenAt } }, { type: 'device.stale', occurredAt });
  }
  for (const { deviceId, supersedes, createdAt } of candidates.reenrolled) {
    const mark: AlertMark = { orgId, deviceId, kind: 'reenrolled', subject: '', since: createdAt };
    await raise({ raise: mark }, { type: 'device.reenrolled', occurredAt: createdAt, supersedes });
  }
  return queued;
}

/** One delivery per webhook that takes the event and existed when it happened (a new webhook hears nothing older). */
async function deliveriesFor(store: Store, webhooks: readonly WebhookRecord[], event: AlertEvent): Promise<NewDelivery[]> {
  const takers = webhooks.filter((w) => w.events.includes(event.type) && w.createdAt <= event.occurredAt);
  if (takers.length === 0) return [];
  if (event.check && takers.some((w) => w.includeEvidence)) {
    const latest = (await store.latestResults(event.device)).find((r) => r.checkKey === event.check!.checkKey);
    event.check.evidence = latest?.evidence ?? null;
  }
  const eventId = newEventId();
  return takers.map((w) => ({
    webhookId: w.id,
    orgId: w.orgId,
    eventId,
    eventType: event.type satisfies WebhookEvent,
    deviceId: event.device.id,
    body: eventBody(eventId, event, w.format, w.includeEvidence),
  }));
}

// ---- the dispatcher ------------------------------------------------------------------------------

async function dispatch(store: Store, options: AlertOptions, now: () => Date, logger: Logger): Promise<void> {
  for (;;) {
    const due = await store.dueDeliveries(now().toISOString(), DUE_BATCH);
    if (due.length === 0) return;
    for (let i = 0; i < due.length; i += PARALLEL_SENDS)
      await Promise.all(due.slice(i, i + PARALLEL_SENDS).map((d) => attempt(store, d, options, now, logger)));
    if (due.length < DUE_BATCH) return;
  }
}

async function attempt(store: Store, delivery: DueDelivery, options: AlertOptions, now: () => Date, logger: Logger): Promise<void> {
  const claimedAt = now();
  if (!(await store.claimDelivery(delivery.id, claimedAt.toISOString(), new Date(claimedAt.getTime() + CLAIM_MS).toISOString()))) return;
  const attempts = delivery.attempts + 1;
  const sent = await send(delivery);
  const at = now();
  if (sent.ok) {
    await store.finishDelivery(delivery.id, {
      state: 'delivered',
      lastStatus: sent.status,
      lastError: null,
      nextAttemptAt: null,
      finishedAt: at.toISOString(),
    });
    return;
  }
  const failed = attempts >= MAX_ATTEMPTS;
  const backoff = Math.min(options.intervalMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
  await store.finishDelivery(delivery.id, {
    state: failed ? 'failed' : 'pending',
    lastStatus: sent.status,
    lastError: sent.error,
    nextAttemptAt: failed ? null : new Date(at.getTime() + backoff).toISOString(),
    finishedAt: failed ? at.toISOString() : null,
  });
  // The URL is not logged: a Slack webhook's path is its secret.
  logger.warn(
    {
      event: 'webhook_delivery_failed',
      webhook_id: delivery.webhookId,
      event_id: delivery.eventId,
      status: sent.status,
      error: sent.error,
      attempts,
      gave_up: failed,
    },
    'webhook delivery failed',
  );
}

async function send(delivery: DueDelivery): Promise<{ ok: boolean; status: number | null; error: string | null }> {
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const answer = await request(delivery.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `device-agent-server/${VERSION}`,
        [EVENT_HEADER]: delivery.eventType,
        [DELIVERY_HEADER]: delivery.eventId,
        [TIMESTAMP_HEADER]: String(timestamp),
        [SIGNATURE_HEADER]: signature(delivery.secret, timestamp, delivery.body),
      },
      body: delivery.body,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await answer.body.dump();
    const ok = answer.statusCode >= 200 && answer.statusCode < 300;
    return { ok, status: answer.statusCode, error: ok ? null : `HTTP ${answer.statusCode}` };
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { ok: false, status: null, error: message.slice(0, MAX_ERROR_LENGTH) };
  }
}
