// device-agent-server: the bundled reference server of the Device Agent API and its admin CLI.
import { Command } from 'commander';
import { VERSION } from '../version';

const program = new Command('device-agent-server')
  .description('Reference server of the Device Agent API, with an admin CLI')
  .version(VERSION);

program.parseAsync(process.argv).catch((err) => {
  process.stderr.write(`device-agent-server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
