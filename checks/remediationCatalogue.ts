// Every platform's remediation catalogue (checks/<os>/remediation.ts), for the agent's CLI and the
// server's views alike. Data only: importing it loads no check and touches nothing.
import type { Platform, PostureResult } from '../src/protocol/schemas';
import { darwinRemediation } from './darwin/remediation';
import { freebsdRemediation } from './freebsd/remediation';
import { linuxRemediation } from './linux/remediation';
import { explain, type Explanation, type OsHint, type PlatformRemedies, type PolicyValues } from './remediation';
import { windowsRemediation } from './windows/remediation';

export const REMEDIATION: Readonly<Record<Platform, PlatformRemedies>> = {
  LINUX: linuxRemediation,
  DARWIN: darwinRemediation,
  WINDOWS: windowsRemediation,
  FREEBSD: freebsdRemediation,
};

/** What a result of a device of `platform` means and what to do; generic texts for what the catalogue does not know. */
export function explainResult(
  platform: string,
  result: Pick<PostureResult, 'check_key' | 'status' | 'evidence'>,
  context: { policy?: PolicyValues; os?: OsHint } = {},
): Explanation {
  const catalogue = Object.hasOwn(REMEDIATION, platform) ? REMEDIATION[platform as Platform] : undefined;
  return explain(catalogue, result, context);
}
