// `device-agent run [--once]`: applies the daemon's V8 settings (src/agent/daemonMemory.ts), then
// loads the daemon (./runDaemon). Its modules are imported here, not at the top: an import is
// evaluated before the module that imports it, so the heap would grow before the settings applied.
import { applyDaemonMemorySettings } from '../../agent/daemonMemory';
import type { ExitCode } from '../exitCodes';
import type { RunCliOptions } from './runDaemon';

export type { RunCliOptions } from './runDaemon';

export default async function runCommand(options: RunCliOptions): Promise<ExitCode> {
  applyDaemonMemorySettings();
  return (await import('./runDaemon')).default(options);
}
