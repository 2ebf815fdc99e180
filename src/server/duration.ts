// Durations written the way operators write them: 30s, 15m, 12h, 7d.
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9][0-9]{0,5})(s|m|h|d)$/;

export const DURATION_HINT = 'a positive whole number followed by s, m, h or d (e.g. 30s, 15m, 12h, 7d)';

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
