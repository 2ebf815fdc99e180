// The one place that maps Node's platform name to the protocol's.
import type { Platform } from '../protocol/schemas';

const PLATFORM_BY_NODE: Partial<Record<NodeJS.Platform, Platform>> = {
  linux: 'LINUX',
  darwin: 'DARWIN',
  win32: 'WINDOWS',
  freebsd: 'FREEBSD',
};

class UnsupportedPlatformError extends Error {
  override name = 'UnsupportedPlatformError';
}

export function currentPlatform(nodePlatform: NodeJS.Platform = process.platform): Platform {
  const platform = PLATFORM_BY_NODE[nodePlatform];
  if (!platform) throw new UnsupportedPlatformError(`unsupported operating system: ${nodePlatform}`);
  return platform;
}
