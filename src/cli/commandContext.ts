// What a command built from the common options: its logger and its state directory.
import { createLogger, type Logger } from '../agent/logger';
import { resolveStateDir, verifyStateDir } from '../agent/stateDir';
import { keystoreFor } from '../platform/serviceKeystore';
import type { KeyStoreChoice } from '../agent/keystore/types';
import type { CommonOptions } from './commonOptions';

export interface CommandContext {
  stateDir: string;
  keystore: KeyStoreChoice;
  caFile?: string;
  logger: Logger;
}

let activeLogger: Logger | undefined;

/** The logger of the running command, once it has one (for reporting an unexpected failure). */
export function currentLogger(): Logger | undefined {
  return activeLogger;
}

/** Logger first, so that a failure resolving the state directory can already be logged. */
export async function commandContext(options: CommonOptions): Promise<CommandContext> {
  const logger = await createLogger({ level: options.logLevel });
  activeLogger = logger;
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  await verifyStateDir(stateDir);
  const keystore = keystoreFor(options.keystore, stateDir);
  logger.debug({ state_dir: stateDir, keystore }, 'state directory');
  return { stateDir, keystore, ...(options.caFile ? { caFile: options.caFile } : {}), logger };
}
