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

export function addCommonOptions(command: Command): Command {
  return command
    .addOption(new Option('--state-dir <dir>', 'state directory').env('DEVICE_AGENT_STATE_DIR'))
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
