// This platform's checks, one module each (see checks/registry.ts). All nine read one shared
// PowerShell probe per cycle (checks/windows/probe.ts).
import { autoUpdateCheck } from './autoUpdate';
import { diskEncryptionCheck } from './diskEncryption';
import { firewallCheck } from './firewall';
import { malwareProtectionCheck } from './malwareProtection';
import { osVersionCheck } from './osVersion';
import { passwordPolicyCheck } from './passwordPolicy';
import { remoteLoginCheck } from './remoteLogin';
import { screenLockCheck } from './screenLock';
import { timeSyncCheck } from './timeSync';

export const checks = [
  diskEncryptionCheck,
  screenLockCheck,
  firewallCheck,
  timeSyncCheck,
  osVersionCheck,
  autoUpdateCheck,
  passwordPolicyCheck,
  remoteLoginCheck,
  malwareProtectionCheck,
] as const;
