// Options shared by the commands that work on a state directory (contract: "common"), each with its
// environment variable; a flag overrides the environment, which overrides the default. Kept free of
// heavy imports: every command registers these at start-up.
import { Command, Option } from 'commander';
import { KEYSTORE_CHOICES, type KeyStoreChoice } from '../agent/state';
import { LOG_LEVELS, type LogLevel } from '../agent/logLevels';

export interface CommonOptions {
  stateDir?: string;
  keystore: KeyStoreChoice;
  caFile?: string;
  logLevel: LogLevel;
}

/** --state-dir: also `check`'s, which reads the server policy the state holds and nothing else. */
export function stateDirOption(description = 'state directory'): Option {
  return new Option('--state-dir <dir>', description).env('DEVICE_AGENT_STATE_DIR');
}

export function addCommonOptions(command: Command): Command {
  return command
    .addOption(stateDirOption())
    .addOption(
      new Option('--keystore <backend>', 'where the API key is kept')
        .choices(KEYSTORE_CHOICES)
        .env('DEVICE_AGENT_KEYSTORE')
        .default('auto'),
    )
    .addOption(new Option('--ca-file <pem>', 'extra trusted CA bundle (PEM)').env('DEVICE_AGENT_CA_FILE'))
    .addOption(
      new Option('--log-level <level>', 'log verbosity (to stderr)').choices(LOG_LEVELS).env('DEVICE_AGENT_LOG_LEVEL').default('info'),
    );
}
