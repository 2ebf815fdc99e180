// device-agent: the agent CLI and daemon. The entry point loads only what the command line needs:
// a bare `--version` is answered here, without loading the command line parser; everything else
// goes to the commander program (program.ts), whose commands each load their own module.
// First import, so that it runs before any other module initialises: hides a link or token given
// as an argument from the process list.
import './processTitle';
import { VERSION } from '../version';

const args = process.argv.slice(2);
// Commander's own `.version()` flags and output, for the one command line that needs nothing else.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) process.stdout.write(`${VERSION}\n`);
else void import('./program');
