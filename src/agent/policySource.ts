// Which policy judged the last posture cycle (recorded by the daemon in status.json), in the words
// `status` and `doctor` show: "server version 7, fetched …", "local file …" or the defaults. Light:
// `status` loads it, so no zod.

/** Which policy judged a cycle (postureCycle.ts). */
export type PolicySource =
  | { source: 'server'; version: number; lifecycle_version: number; fetched_at: string; local_file?: string }
  | { source: 'local'; file: string }
  | { source: 'default' };

/** The sentence for a recorded source; undefined when none (or an unreadable one) was recorded. */
export function describePolicySource(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const recorded = value as Record<string, unknown>;
  switch (recorded.source) {
    case 'server': {
      const { version, lifecycle_version: lifecycle, fetched_at: fetchedAt, local_file: local } = recorded;
      if (typeof version !== 'number' || typeof lifecycle !== 'number' || typeof fetchedAt !== 'string') return undefined;
      const data = lifecycle === 0 ? "the server's built-in lifecycle data" : `lifecycle data version ${lifecycle} from the server`;
      const file = typeof local === 'string' ? local : undefined;
      if (version === 0)
        return `${file ? `local file ${file}` : 'built-in defaults'} (the server sets no policy for this organization; ${data}, fetched ${fetchedAt})`;
      const overrides = file ? `; local file ${file} where the server allows local overrides` : '';
      return `server version ${version}, fetched ${fetchedAt} (${data})${overrides}`;
    }
    case 'local':
      return typeof recorded.file === 'string' ? `local file ${recorded.file}` : undefined;
    case 'default':
      return 'built-in defaults';
    default:
      return undefined;
  }
}
