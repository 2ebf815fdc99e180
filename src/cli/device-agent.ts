// device-agent: the agent CLI and daemon. Each command's work lives in src/cli/commands/<name>.ts,
// loaded only when that command runs, so `--version` and `--help` stay cheap.
import { Command } from 'commander';
import { VERSION } from '../version';

const program = new Command('device-agent')
  .description('Device posture agent for the Device Agent API')
  .version(VERSION);

program.parseAsync(process.argv).catch((err) => {
  process.stderr.write(`device-agent: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
