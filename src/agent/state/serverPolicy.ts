// server-policy.json: the policy the enrollment's server last served (its policy extension, docs/
// agent.md), kept so that a restart applies it without waiting for the server. Written atomically
// by the daemon only after the policy passed validation (postureCycle.ts); removed with the
// credentials. Only the envelope is checked here: a damaged file reads as none (the local policy
// applies until the next fetch), never as an error.
import * as z from 'zod/mini';
import { Rfc3339 } from '../../protocol/rfc3339';
import { PolicyResponse, PolicyVersion } from '../../protocol/schemas';
import { readFileIfExists, writeFileAtomic } from './atomicFile';
import type { StateLayout } from './layout';

const StoredServerPolicy = z.object({
  /** The heartbeat's `policy_version` this response answers (policyToken). */
  policy_version: PolicyVersion,
  fetched_at: Rfc3339,
  response: PolicyResponse,
});
export type StoredServerPolicy = z.infer<typeof StoredServerPolicy>;

export async function readServerPolicy(layout: Pick<StateLayout, 'serverPolicy'>): Promise<StoredServerPolicy | null> {
  const text = await readFileIfExists(layout.serverPolicy).catch(() => null);
  if (text === null) return null;
  try {
    const parsed = StoredServerPolicy.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export function writeServerPolicy(layout: Pick<StateLayout, 'serverPolicy'>, policy: StoredServerPolicy): Promise<void> {
  return writeFileAtomic(layout.serverPolicy, JSON.stringify(policy));
}
