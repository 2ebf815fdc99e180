// What a command built from the common options: its state directory, key store and, for a command
// that logs, its logger. The logger (pino) is loaded only by commands that log: `status` prints a
// report and logs nothing, so it starts without it (docs/architecture.md, "Start-up").
import type { Logger } from '../agent/logger';
import { resolveStateDir, verifyStateDir } from '../agent/stateDir';
import { keystoreFor } from '../platform/serviceKeystore';
import type { KeyStoreChoice } from '../agent/keystore/types';
import type { CommonOptions } from './commonOptions';

export interface StateContext {
  stateDir: string;
  keystore: KeyStoreChoice;
  caFile?: string;
}

export interface CommandContext extends StateContext {
  logger: Logger;
}

let activeLogger: Logger | undefined;

/** The logger of the running command, once it has one (for reporting an unexpected failure). */
export function currentLogger(): Logger | undefined {
  return activeLogger;
}

/** The state directory (verified) and key store the options name, for a command that does not log. */
export async function stateContext(options: CommonOptions): Promise<StateContext> {
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  await verifyStateDir(stateDir);
  const keystore = keystoreFor(options.keystore, stateDir);
  return { stateDir, keystore, ...(options.caFile ? { caFile: options.caFile } : {}) };
}

/** Logger first, so that a failure resolving the state directory can already be logged. */
export async function commandContext(options: CommonOptions): Promise<CommandContext> {
  const { createLogger } = await import('../agent/logger');
  const logger = await createLogger({ level: options.logLevel });
  activeLogger = logger;
  const context = await stateContext(options);
  logger.debug({ state_dir: context.stateDir, keystore: context.keystore }, 'state directory');
  return { ...context, logger };
}
