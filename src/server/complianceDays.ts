// The rows of the daily compliance series (admin.ts, complianceSeries), read cheaply: a day that is
// over no longer changes (a result's received_at is the server's time of arrival), so each process
// reads a settled day's rows from posture_results once and keeps them; the current day is read from
// latest_results (each device's latest result of a check, when it arrived today, is its last of the
// day), a query the size of the overview's own counts. docs/server.md, "Server caches".
import type { DailyCompliance, OrgScope, Store } from './db/store';

const DAY_MS = 86_400_000;
/**
 * A day is settled this long after it ended: longer than any request may take, so that an upload
 * received before midnight and committed after it is in the rows kept.
 */
export const SETTLED_AFTER_MS = 10 * 60_000;
/** Scopes (organization or all, as asked) whose days a process keeps; the oldest asked is dropped beyond. */
const MAX_SCOPES = 256;
/** Days kept per scope: the longest series asked (admin.ts's MAX_SERIES_DAYS) and a margin. */
const MAX_DAYS = 100;

const settled = new WeakMap<Store, Map<string, Map<string, DailyCompliance[]>>>();

/**
 * The rows of the days from `first` (a day's start, ms) to today (the day of `now`), oldest first:
 * the settled days from this process's memory (read once), the one that ended less than
 * SETTLED_AFTER_MS ago read again, and today from the latest results.
 */
export async function dailyRows(
  store: Store,
  scope: OrgScope,
  org: string | undefined,
  first: number,
  now: number,
): Promise<DailyCompliance[]> {
  const today = now - (now % DAY_MS);
  const settledUntil = Math.max(first, Math.min(today, now - SETTLED_AFTER_MS - ((now - SETTLED_AFTER_MS) % DAY_MS)));
  const days = scopeDays(store, JSON.stringify([scope.orgId, org ?? null]));
  const missing: number[] = [];
  for (let t = first; t < settledUntil; t += DAY_MS) if (!days.has(dayOf(t))) missing.push(t);
  if (missing.length > 0) {
    const from = missing[0]!;
    const until = missing.at(-1)! + DAY_MS;
    const read = await store.dailyCompliance(scope, org, iso(from), iso(until));
    for (let t = from; t < until; t += DAY_MS) days.set(dayOf(t), []);
    for (const row of read) days.get(row.day)?.push(row);
    for (const day of [...days.keys()].sort().slice(0, Math.max(0, days.size - MAX_DAYS))) days.delete(day);
  }
  const rows: DailyCompliance[] = [];
  for (let t = first; t < settledUntil; t += DAY_MS) rows.push(...(days.get(dayOf(t)) ?? []));
  if (settledUntil < today) rows.push(...(await store.dailyCompliance(scope, org, iso(settledUntil), iso(today))));
  const day = dayOf(today);
  for (const row of await store.latestCompliance(scope, org, iso(today))) rows.push({ day, ...row });
  return rows;
}

function scopeDays(store: Store, key: string): Map<string, DailyCompliance[]> {
  let scopes = settled.get(store);
  if (!scopes) settled.set(store, (scopes = new Map<string, Map<string, DailyCompliance[]>>()));
  let days = scopes.get(key);
  if (!days) {
    if (scopes.size >= MAX_SCOPES) scopes.delete(scopes.keys().next().value!);
    scopes.set(key, (days = new Map<string, DailyCompliance[]>()));
  }
  return days;
}

const iso = (t: number) => new Date(t).toISOString();
const dayOf = (t: number) => iso(t).slice(0, 10);
