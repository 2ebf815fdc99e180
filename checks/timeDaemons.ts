// What the network time daemons of Linux and FreeBSD say about the clock, read the same way on
// both: ntpd and ntpsec through ntpq's system variables, OpenNTPD through `ntpctl -s status`,
// chrony through `chronyc tracking` (text or CSV). Each platform runs the tools (paths and
// arguments differ) and decides what an unanswered query means.

export interface ClockSync {
  synchronized: boolean;
  stratum?: number;
  offsetSeconds?: number;
}

/** Stratum 16 (and 0, chrony's "no reference") means the daemon has no synchronised source. */
const usableStratum = (stratum: number) => stratum >= 1 && stratum <= 15;

/**
 * ntpq's readvar output: `leap=00, stratum=3, offset=-0.512` (offset in milliseconds), alone
 * (`rv 0 leap,stratum,offset`) or among all the system variables (`rv`). Leap indicator 11
 * ("alarm") or an unusable stratum means not synchronised. Undefined without leap and stratum.
 */
export function ntpqClockSync(stdout: string): ClockSync | undefined {
  const vars = Object.fromEntries([...stdout.matchAll(/\b(leap|stratum|offset)=([^,\s]+)/g)].map((m) => [m[1]!, m[2]!]));
  if (!/^[01]{2}$/.test(vars.leap ?? '') || !/^\d+$/.test(vars.stratum ?? '')) return undefined;
  const stratum = Number(vars.stratum);
  const reading: ClockSync = { synchronized: vars.leap !== '11' && usableStratum(stratum), stratum };
  if (vars.offset !== undefined && /^[-+]?\d+(\.\d+)?$/.test(vars.offset)) reading.offsetSeconds = Number(vars.offset) / 1000;
  return reading;
}

/** OpenNTPD's `ntpctl -s status`: "4/4 peers valid, clock synced, stratum 3" or "… clock unsynced[, …]". */
export function ntpctlClockSync(stdout: string): ClockSync | undefined {
  const synced = /(?:^|, )clock synced, stratum (\d+)$/m.exec(stdout);
  if (synced) return { synchronized: true, stratum: Number(synced[1]) };
  return /(?:^|, )clock unsynced(?:,|$)/m.test(stdout) ? { synchronized: false } : undefined;
}

/** chrony's leap status: the three that mean a synchronised clock, and the one that does not. */
const CHRONY_LEAP: Record<string, boolean> = { Normal: true, 'Insert second': true, 'Delete second': true, 'Not synchronised': false };

function chronyReading(leap: string | undefined, stratum: number | undefined, offsetSeconds: number | undefined): ClockSync | undefined {
  if (leap === undefined || !(leap in CHRONY_LEAP)) return undefined;
  const reading: ClockSync = { synchronized: CHRONY_LEAP[leap]! && (stratum === undefined || usableStratum(stratum)) };
  if (stratum !== undefined) reading.stratum = stratum;
  if (offsetSeconds !== undefined) reading.offsetSeconds = offsetSeconds;
  return reading;
}

/** `chronyc -n tracking`: "Leap status : Normal", "Stratum : 3", "System time : 0.000004709 seconds fast of NTP time". */
export function chronyTrackingText(stdout: string): ClockSync | undefined {
  const leap = /^Leap status\s*:\s*(.+?)\s*$/m.exec(stdout)?.[1];
  const stratum = /^Stratum\s*:\s*(\d+)/m.exec(stdout)?.[1];
  const offset = /^System time\s*:\s*([\d.]+) seconds (fast|slow)/m.exec(stdout);
  return chronyReading(
    leap,
    stratum === undefined ? undefined : Number(stratum),
    offset ? Number(offset[1]) * (offset[2] === 'slow' ? -1 : 1) : undefined,
  );
}

/** `chronyc -c tracking`: 14 comma-separated fields; the 3rd is the stratum, the 5th the offset (s), the last the leap status. */
export function chronyTrackingCsv(stdout: string): ClockSync | undefined {
  const fields = stdout.trim().split(',');
  if (fields.length !== 14 || !/^\d+$/.test(fields[2]!)) return undefined;
  const offset = /^[-+]?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(fields[4]!) ? Number(fields[4]) : undefined;
  return chronyReading(fields[13], Number(fields[2]), offset);
}
