// The start-up floor of `status` (npm run bench:footprint): what the command cannot do without, and
// nothing else. It parses its command line with commander, checks one state record with a zod/mini
// schema, and loads the secret-store addon by the cheapest route there is (process.dlopen of the
// .node file, skipping the package's platform probe), then prints a line. The bench bundles it as
// scripts/build.mjs bundles the agent and runs it beside `node -e 0`: the agent's `status` cannot
// start faster than this.
//   node status-stack.cjs status --state-dir <dir> --addon <keyring .node file>
import { Command } from 'commander';
import * as z from 'zod/mini';

const enrollmentRecord = z.object({
  state: z.enum(['enrolled', 'enrolling', 'wiping']),
  server_url: z.url(),
  enrolled_at: z.iso.datetime(),
});

new Command('device-agent')
  .command('status')
  .option('--json', 'print one JSON object')
  .requiredOption('--state-dir <dir>', 'state directory')
  .requiredOption('--addon <file>', 'the secret-store addon')
  .action((options: { stateDir: string; addon: string; json?: boolean }) => {
    const record = enrollmentRecord.safeParse({
      state: 'enrolled',
      server_url: 'https://agents.example.com',
      enrolled_at: new Date().toISOString(),
    });
    const addon = { exports: {} };
    process.dlopen(addon, options.addon);
    process.stdout.write(`${options.stateDir}: ${record.success ? 'enrolled' : 'not enrolled'}\n`);
  })
  .parent!.parse();
