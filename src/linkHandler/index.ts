// The link-handler module of each platform.
import type { Platform } from '../protocol/schemas';
import { darwinLinkHandler } from './darwin';
import type { LinkHandlerModule } from './types';
import { windowsLinkHandler } from './windows';
import { xdgLinkHandler } from './xdg';

const HANDLERS: Record<Platform, LinkHandlerModule> = {
  LINUX: xdgLinkHandler('/usr/share'),
  FREEBSD: xdgLinkHandler('/usr/local/share'),
  DARWIN: darwinLinkHandler,
  WINDOWS: windowsLinkHandler,
};

export function linkHandlerFor(platform: Platform): LinkHandlerModule {
  return HANDLERS[platform];
}
