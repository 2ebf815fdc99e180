// The service module of each platform.
import type { Platform } from '../protocol/schemas';
import { launchdService } from './launchd';
import { rcdService } from './rcd';
import { systemdService } from './systemd';
import type { ServiceModule } from './types';
import { windowsService } from './windows';

const SERVICES: Record<Platform, ServiceModule> = {
  LINUX: systemdService,
  DARWIN: launchdService,
  FREEBSD: rcdService,
  WINDOWS: windowsService,
};

export function serviceFor(platform: Platform): ServiceModule {
  return SERVICES[platform];
}
