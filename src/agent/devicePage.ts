// The device page as the agent obtains it: a one-time URL from the server (the device page
// extension, POST /api/agent/v1/device-page) with the enrollment's API key. A server that offers
// only the spec's routes answers 404 or 405: "not offered", not an error. The URL carries a
// secret (its code): it is never logged, and handed only to the opener or printed on request.
import { InvalidRequestError, InvalidResponseError } from './api';
import { createApiClient } from './client';
import type { AgentState } from './state';
import { NotEnrolledError } from './errors';

export type DevicePageAnswer = { offered: true; url: string; expiresAt: string } | { offered: false };

/** What a page URL may contain: an http(s) URL with none of the characters a command line or shell would treat specially. */
const SAFE_URL = /^https?:\/\/[A-Za-z0-9\-._~:/?=[\]@]+$/;

/** The URL when it is one to hand to a browser's opener; InvalidResponseError otherwise. */
export function openableUrl(url: unknown): string {
  if (typeof url === 'string' && SAFE_URL.test(url)) return url;
  throw new InvalidResponseError('devicePage', 'the device page URL is not one this agent will open');
}

/** A one-time URL of this device's page, from the enrollment's server (NotEnrolledError without one). */
export async function requestDevicePage(state: AgentState, options: { caFile?: string; timeoutMs?: number }): Promise<DevicePageAnswer> {
  const credentials = await state.credentials();
  if (credentials === null) throw new NotEnrolledError('this device is not enrolled: enroll it first (device-agent enroll)');
  const { enrollment, apiKey } = credentials;
  const api = createApiClient({ serverUrl: enrollment.server_url, caFile: options.caFile ?? enrollment.ca_file });
  try {
    const page = await api.devicePage(apiKey, { timeoutMs: options.timeoutMs ?? 30_000 });
    return { offered: true, url: openableUrl(page.url), expiresAt: page.expires_at };
  } catch (err) {
    if (err instanceof InvalidRequestError && (err.status === 404 || err.status === 405)) return { offered: false };
    throw err;
  } finally {
    await api.close();
  }
}
