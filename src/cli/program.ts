// The agent's command line (commander), loaded by the entry point (device-agent.ts) for everything
// but a bare `--version`. Each command's work lives in src/cli/commands/<name>.ts, loaded only when
// that command runs (a chunk of its own in the bundle: scripts/build.mjs). One registration block
// per command; an action returns its exit code (src/cli/exitCodes.ts).
import { Command, Option } from 'commander';
import { LINK_SCHEME } from '../protocol/constants';
import { VERSION } from '../version';
import { endQuietlyOnClosedPipe } from './closedPipe';
import { addCommonOptions, stateDirOption } from './commonOptions';
import { describeFailure, redactCredentials } from './exitCodes';
// Types only (erased): each command's module is still loaded only when that command runs.
import type { CommonOptions } from './commonOptions';
import type { CheckCliOptions } from './commands/check';
import type { DoctorCliOptions } from './commands/doctor';
import type { EnrollCliOptions } from './commands/enroll';
import type { InstallCliOptions, ServiceCliOptions } from './commands/install';
import type { MyDeviceCliOptions } from './commands/myDevice';
import type { RunCliOptions } from './commands/run';
import type { StatusCliOptions } from './commands/status';
import type { OpenLinkOptions } from '../linkHandler/openLink';

const program = new Command('device-agent')
  .description('Device posture agent for the Device Agent API')
  .version(VERSION)
  .exitOverride()
  .configureOutput({ writeErr: (text) => process.stderr.write(redactCredentials(text)) })
  .showHelpAfterError('(run with --help for usage)')
  // A reader that stops early (`device-agent check | head`) ends a one-shot command quietly; the
  // daemon (`run`) logs to its standard output, where a closed pipe is a failure its supervisor sees.
  .hook('preAction', (_program, action) => {
    if (action.name() !== 'run') endQuietlyOnClosedPipe();
  });

// enroll
addCommonOptions(
  program
    .command('enroll')
    .description("exchange a one-time enrollment token for this device's API key")
    .argument('[link]', `refused (process list): give the ${LINK_SCHEME}://enroll?… link with --link-file <path> or --link-file -`)
    .addOption(new Option('--server <url>', 'server origin (https://, or http:// on loopback)').env('DEVICE_AGENT_SERVER'))
    .addOption(new Option('--token-file <path>', 'read the enrollment token from a file (recommended)'))
    .addOption(new Option('--token <hex>', 'the enrollment token, or - to read it from standard input').env('DEVICE_AGENT_TOKEN'))
    .addOption(new Option('--enroll-secret-file <path>', "read the organization's enrollment secret from a file"))
    .addOption(new Option('--enroll-secret <->', 'read the enrollment secret from standard input').env('DEVICE_AGENT_ENROLL_SECRET'))
    .addOption(new Option('--allow-enroll-secret-argument', 'take --enroll-secret <value> (installers running as SYSTEM only)').hideHelp())
    .option('--link-file <path>', 'read the enrollment link from a file, or - for standard input (recommended)')
    .option('--force', 'replace an existing enrollment (unenrolls it first)'),
)
  .addHelpText(
    'after',
    '\nA token given with --token is visible to other local users (process list) until the agent starts:\n' +
      'prefer --token-file <path> or --token -. A link given as the argument is refused (exit 2, nothing sent):\n' +
      'give it with --link-file <path> or --link-file - (DEVICE_AGENT_ALLOW_LINK_ARGUMENT=1 takes it, for old scripts). An enrollment secret\n' +
      'is never taken as a command-line value: --enroll-secret-file, --enroll-secret - or DEVICE_AGENT_ENROLL_SECRET.\n\nExamples:\n' +
      '  device-agent enroll --server https://agents.example.com --token-file ./token.txt\n' +
      '  printf %s "$TOKEN" | device-agent enroll --server https://agents.example.com --token -\n' +
      '  device-agent enroll --server https://agents.example.com --enroll-secret-file /etc/device-agent/secret\n' +
      '  device-agent enroll --link-file ./link.txt\n' +
      '  device-agent enroll --link-file - < link.txt\n',
  )
  .action(async (link: string | undefined, options: EnrollCliOptions, command: Command) => {
    process.exitCode = await (await import('./commands/enroll')).default(link, options, command);
  });

// status
addCommonOptions(
  program
    .command('status')
    .description('show the enrollment and what the agent last did (no network)')
    .option('--json', 'print one JSON object'),
).action(async (options: StatusCliOptions) => {
  process.exitCode = await (await import('./commands/status')).default(options);
});

// doctor
addCommonOptions(
  program
    .command('doctor')
    .description('check everything from the state directory to an answered heartbeat; a verdict and a next step per line')
    .option('--json', 'print one JSON object {ok, state_dir, checks: [{id, verdict, detail, next}]}'),
)
  .addHelpText(
    'after',
    "\nSends one heartbeat with this device's key and changes nothing else. Never prints a secret.\n" +
      'Exit 0 when every check passed (or warned), 1 otherwise.',
  )
  .action(async (options: DoctorCliOptions) => {
    process.exitCode = await (await import('./commands/doctor')).default(options);
  });

// unenroll
addCommonOptions(
  program.command('unenroll').description("revoke this device's API key at the server (best effort) and delete it locally"),
).action(async (options: CommonOptions) => {
  process.exitCode = await (await import('./commands/unenroll')).default(options);
});

// run
addCommonOptions(
  program
    .command('run')
    .description('run the agent: heartbeats, posture checks and uploads until SIGINT/SIGTERM (logs on standard output)')
    .option('--once', 'one heartbeat, one posture cycle and one upload of the queue, then exit')
    .addOption(new Option('--policy <file>', 'posture policy (JSON) overriding the defaults').env('DEVICE_AGENT_POLICY'))
    .option('--no-notifications', 'no desktop notifications when a check turns FAIL or passes again (DEVICE_AGENT_NOTIFICATIONS=off)'),
)
  .addHelpText(
    'after',
    '\nWithout an enrollment it waits for one (and sends nothing). Backoff: DEVICE_AGENT_RETRY_BASE_MS,\n' +
      'DEVICE_AGENT_RETRY_MAX_MS, DEVICE_AGENT_RETRY_ATTEMPTS (attempts per request with --once).\n' +
      'Exit codes with --once: 0 ok, 3 API key revoked (wiped), 4 server unreachable (results stay queued), 5 not enrolled.',
  )
  .action(async (options: RunCliOptions) => {
    process.exitCode = await (await import('./commands/run')).default(options);
  });

// install
addCommonOptions(
  program
    .command('install')
    .description('install the system service (enrolling first when given a server and a token or secret) and the link handler')
    .addOption(new Option('--server <url>', 'enroll with this server first').env('DEVICE_AGENT_SERVER'))
    .addOption(new Option('--token-file <path>', 'read the enrollment token from a file (recommended)'))
    .addOption(new Option('--token <hex>', 'the enrollment token, or - to read it from standard input').env('DEVICE_AGENT_TOKEN'))
    .addOption(new Option('--enroll-secret-file <path>', "enroll with the organization's enrollment secret read from a file"))
    .addOption(new Option('--enroll-secret <->', 'read the enrollment secret from standard input').env('DEVICE_AGENT_ENROLL_SECRET'))
    .option('--no-enroll', 'install a service that waits for an enrollment')
    .option('--dry-run', 'print every file and command, change nothing')
    .addOption(new Option('--platform <name>', 'with --dry-run: plan for linux, darwin, windows or freebsd').hideHelp()),
)
  .addHelpText(
    'after',
    '\nNeeds root (sudo) or an elevated shell. Without --server and a token or enrollment secret the state directory must\n' +
      'already be enrolled, unless --no-enroll. Running it again updates the program and the service.\n',
  )
  .action(async (options: InstallCliOptions, command: Command) => {
    process.exitCode = await (await import('./commands/install')).default(options, command);
  });

// uninstall
addCommonOptions(
  program
    .command('uninstall')
    .description('remove the service and the link handler, revoke and delete the API key, delete the state directory')
    .option('--dry-run', 'print every file and command, change nothing')
    .addOption(new Option('--platform <name>', 'with --dry-run: plan for linux, darwin, windows or freebsd').hideHelp()),
).action(async (options: ServiceCliOptions) => {
  process.exitCode = await (await import('./commands/uninstall')).default(options);
});

// open-link: what the registered link handler runs (src/linkHandler/)
addCommonOptions(
  program
    .command('open-link', { hidden: true })
    .description('show the server of an enrollment link and ask before enrolling')
    .argument('[link]', `the ${LINK_SCHEME}:// enrollment link`)
    .option('--link-file <path>', 'read the link from a file, or - for standard input')
    .option('--describe', 'print the server origin of the link and exit')
    .option('--yes', 'the user already confirmed')
    .option('--via-terminal', 'started by the desktop without a terminal: open one on a private copy of the link')
    .option('--consume-link-file', 'delete the link file once read')
    .option('--dbus-service', 'started by the session bus: take the links over D-Bus (org.freedesktop.Application)'),
).action(async (link: string | undefined, options: OpenLinkOptions) => {
  process.exitCode = await (await import('../linkHandler/openLink')).default(link, options);
});

// check
program
  .command('check')
  .description('run the posture checks on this machine and print what would be reported (sends nothing)')
  .option(
    '--json',
    'print a JSON array of posture results {check_key, status, evidence, observed_at} with their summary, fix and admin texts and the policy that judged them',
  )
  .option('--explain', 'explain PASS results too (results that are not PASS are always explained)')
  .option('--only <keys>', 'comma-separated check keys, e.g. DISK_ENCRYPTION,FIREWALL_ENABLED')
  .addOption(new Option('--policy <file>', 'posture policy (JSON) overriding the defaults').env('DEVICE_AGENT_POLICY'))
  .addOption(stateDirOption("the agent's state directory: the server policy it holds applies"))
  .option('--report', 'ask the running service to check now and upload the results at once (at most once a minute)')
  .addHelpText('after', '\nExit code 0 whatever the statuses; 2 for an unknown check key or an unusable policy file.')
  .action(async (options: CheckCliOptions & { report?: boolean }) => {
    process.exitCode = options.report
      ? await (await import('./commands/checkReport')).default()
      : await (await import('./commands/check')).default(options);
  });

// my-device
addCommonOptions(
  program
    .command('my-device')
    .description("open this device's page on the server: its checks, how to fix what fails, who manages it")
    .option('--print-url', 'print the one-time URL instead of opening it'),
).action(async (options: MyDeviceCliOptions) => {
  process.exitCode = await (await import('./commands/myDevice')).default(options);
});

// notify (hidden): the service runs it as the user at the screen
program
  .command('notify', { hidden: true })
  .description('show one posture notification, read as JSON from standard input, on this session bus')
  .action(async () => {
    process.exitCode = await (await import('./commands/notify')).default();
  });

program.parseAsync(process.argv).catch(async (err: unknown) => {
  const failure = describeFailure(err);
  if (failure.message !== null) process.stderr.write(redactCredentials(`device-agent: ${failure.message}\n`));
  if (failure.unexpected) (await import('./commandContext')).currentLogger()?.debug({ err }, 'unexpected error');
  process.exitCode = failure.exitCode;
});
