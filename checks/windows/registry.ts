// Registry values as the probe scripts hand them over (.NET RegistryKey.GetValue through
// ConvertTo-Json): DWORD/QWORD numbers, REG_SZ strings, REG_MULTI_SZ string arrays.
import * as z from 'zod/mini';

export const RegistryValues = z.record(z.string(), z.union([z.number(), z.string(), z.array(z.union([z.string(), z.number()]))]));
export type RegistryValues = z.infer<typeof RegistryValues>;

/** A registry number: a DWORD as unsigned (.NET hands DWORDs over as signed Int32), or a REG_SZ of digits. */
export function asNumber(value: unknown): number | null | 'invalid' {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return Number.isInteger(value) ? (value < 0 ? value + 2 ** 32 : value) : 'invalid';
  if (typeof value === 'string' && /^\s*\d{1,10}\s*$/.test(value)) return Number(value);
  return 'invalid';
}

/** The string, null when absent, or 'invalid' for a value of another type. */
export function asText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : 'invalid';
}

export const regNumber = (values: RegistryValues | null, name: string) => asNumber(values?.[name]);
export const regString = (values: RegistryValues | null, name: string) => asText(values?.[name]);
