// Runs first in the agent's entry point (its first import). An enrollment link or a token given as an
// argument sits in /proc/<pid>/cmdline, readable by every local user, for as long as the process runs.
// Setting the title rewrites that area (libuv), so it is done before any other module loads: what
// remains is the interval between exec and this line (docs/agent.md, "Secrets and the process list").
import { processTitle } from './redaction';

process.title = processTitle(process.argv.slice(2));
