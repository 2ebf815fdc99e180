// This platform's checks, one module each (see checks/registry.ts).
import { autoUpdate } from './autoUpdate';
import { diskEncryption } from './diskEncryption';
import { firewall } from './firewall';
import { malwareProtection } from './malwareProtection';
import { osVersion } from './osVersion';
import { passwordPolicy } from './passwordPolicy';
import { remoteLogin } from './remoteLogin';
import { screenLock } from './screenLock';
import { timeSync } from './timeSync';

export const checks = [
  diskEncryption,
  screenLock,
  firewall,
  timeSync,
  osVersion,
  autoUpdate,
  passwordPolicy,
  remoteLogin,
  malwareProtection,
] as const;
