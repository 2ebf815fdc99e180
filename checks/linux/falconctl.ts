// CrowdStrike Falcon on Linux judged by its own settings report, `falconctl -g`, not by its sensor
// process running: a running sensor can be in reduced functionality mode (RFM: an unsupported
// kernel, it sends heartbeats but no events and blocks nothing) or never have registered with the
// cloud (no agent id: no CID, or the cloud unreachable since install).
// The report has no single format: sensor 5.x and 6.x print the asked options on one line separated
// by ", " (the version glued to the tags after it), 7.x and later end each option with "." or ","
// and put some on their own line. So it is cut at newlines and at ", ", and each part is read as
// `name=value` or `name is not set`; parts that are neither are reported by their number.
import { failed, unreadFields, unreadable, type HealthReading } from '../agentHealth';

export const FALCONCTL = '/opt/CrowdStrike/falconctl';
/**
 * The options asked together, as recorded on real sensors (jstraw/puppet-crowdstrike's facter
 * fact): the agent id, RFM state and reason, the version; the proxy settings and tags come with
 * that call and are never read into the evidence.
 */
export const FALCONCTL_ARGS = ['-g', '--aid', '--apd', '--aph', '--app', '--rfm-state', '--rfm-reason', '--version', '--tags'] as const;

export interface FalconHealth {
  /** `rfm-state`: the sensor runs in reduced functionality mode. */
  rfm?: boolean;
  /** `rfm-reason` without its code ("None" when not in RFM), and the code printed after it. */
  rfmReason?: string;
  rfmCode?: string;
  /** An agent id is set: the sensor registered with the CrowdStrike cloud. */
  registered?: boolean;
  version?: string;
  /** 1-based numbers of the parts that are no `name=value` nor `name is not set`. */
  unrecognizedParts: number[];
}

const PART = /^([A-Za-z][A-Za-z-]*)(?:\s*=\s*(.*)| is not set)$/;
const AGENT_ID = /^"[0-9a-f]{32}"$/i;
const REASON = /^[A-Za-z0-9][A-Za-z0-9 '()_/-]{0,79}$/;

const bool = (value: string) => {
  const word = value.toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : undefined;
};

/** How each option that matters is read from its `name=value`; a value that does not fit stays unread. */
const READ: Partial<Record<string, (value: string) => Partial<FalconHealth>>> = {
  aid: (value) => ({ registered: AGENT_ID.test(value) || undefined }),
  'rfm-state': (value) => ({ rfm: bool(value) }),
  'rfm-reason': (value) => ({ rfmReason: REASON.test(value) ? value : undefined }),
  code: (value) => ({ rfmCode: /^0x[0-9a-f]+$/i.test(value) ? value : undefined }),
  // The version runs into the tags printed after it ("6.24.12104.0tags=…"): its leading number only.
  version: (value) => ({ version: /^\d+(?:\.\d+)+/.exec(value)?.[0] }),
};

/** Reads `falconctl -g`'s answer for FALCONCTL_ARGS. */
export function parseFalconctl(stdout: string): FalconHealth {
  const health: FalconHealth = { unrecognizedParts: [] };
  stdout
    .split(/\n|,(?=\s|$)/)
    .map((part) => part.trim().replace(/\.$/, ''))
    .filter((part) => part !== '')
    .forEach((part, i) => {
      const m = PART.exec(part);
      if (!m) {
        health.unrecognizedParts.push(i + 1);
        return;
      }
      const name = m[1]!.toLowerCase();
      const value = m[2];
      // `aid is not set`: the sensor never registered; any other option not set stays unread.
      if (value === undefined) {
        if (name === 'aid') health.registered = false;
      } else Object.assign(health, READ[name]?.(value));
    });
  return health;
}

/** What Falcon's report says (agentHealth.ts combines it with the other products'). */
export function judgeFalcon(reading: HealthReading<FalconHealth>) {
  if (!reading.ok) return unreadable('falcon-sensor', { health_error: reading.error });
  const h = reading.health;
  const falcon: Record<string, unknown> = { rfm: h.rfm ?? null, registered: h.registered ?? null, version: h.version ?? null };
  if (h.rfmReason !== undefined) falcon.rfm_reason = h.rfmReason;
  if (h.rfmCode !== undefined) falcon.rfm_code = h.rfmCode;
  if (h.unrecognizedParts.length > 0) falcon.unrecognized_parts = h.unrecognizedParts;
  const evidence = { falcon };
  // Registering comes first: an unregistered sensor gets no policy, and its RFM state follows from it.
  if (h.registered === false) return failed(evidence, 'agent_not_registered');
  if (h.rfm === true) return failed(evidence, 'reduced_functionality_mode');
  const unread = unreadFields({ 'rfm-state': h.rfm, aid: h.registered });
  if (unread.length > 0) return unreadable('falcon-sensor', { fields_unread: unread }, evidence);
  return { evidence };
}
