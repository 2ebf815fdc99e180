// One platform's remediation catalogue, loaded on demand: the daemon explains only its own
// platform's results, so only that platform's texts initialise (the server, which explains every
// platform's, imports ./remediationCatalogue). Adding a platform is one line here and one there.
import type { Platform } from '../src/protocol/schemas';
import type { PlatformRemedies } from './remediation';

const loaders: Record<Platform, () => Promise<PlatformRemedies>> = {
  LINUX: async () => (await import('./linux/remediation')).linuxRemediation,
  DARWIN: async () => (await import('./darwin/remediation')).darwinRemediation,
  WINDOWS: async () => (await import('./windows/remediation')).windowsRemediation,
  FREEBSD: async () => (await import('./freebsd/remediation')).freebsdRemediation,
};

export function loadRemediation(platform: Platform): Promise<PlatformRemedies> {
  return loaders[platform]();
}
