// What a command built from the common options: its state (opened, so verified), key store and, for
// a command that logs, its logger. The logger (pino) is loaded only by commands that log: `status`
// prints a report and logs nothing, so it starts without it (docs/performance.md, "The agent's start-up").
import type { Logger } from '../agent/logger';
import { openAgentState, resolveStateDir, type AgentState, type KeyStoreChoice, type OpenOptions } from '../agent/state';
import { keystoreFor } from '../platform/serviceKeystore';
import type { CommonOptions } from './commonOptions';

export interface StateContext {
  state: AgentState;
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

/** The state the options name (opened as `open` says) and the key store, for a command that does not log. */
export async function stateContext(options: CommonOptions, open: OpenOptions = {}): Promise<StateContext> {
  const stateDir = resolveStateDir({ explicit: options.stateDir });
  const state = await openAgentState(stateDir, open);
  const keystore = keystoreFor(options.keystore, stateDir);
  return { state, keystore, ...(options.caFile ? { caFile: options.caFile } : {}) };
}

/** Logger first, so that a failure resolving the state directory can already be logged. */
export async function commandContext(options: CommonOptions, open: OpenOptions = {}): Promise<CommandContext> {
  const { createLogger } = await import('../agent/logger');
  const logger = await createLogger({ level: options.logLevel });
  activeLogger = logger;
  const context = await stateContext(options, open);
  logger.debug({ state_dir: context.state.dir, keystore: context.keystore }, 'state directory');
  return { ...context, logger };
}
