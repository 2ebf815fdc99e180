// `npm run test:mutation [-- <module> ...] [--<stryker option> <value> ...]`: mutation testing of the
// core modules, one Stryker run per module, scoped to the tests that pin that module, then one score
// line per module. Options are passed to each Stryker run (`--concurrency 1` on a shared machine).
// Not part of `npm test` (minutes per module on two cores).
//
// Modules whose tests drive the real programs as child processes (the server routes) run every
// selected test against every mutant (coverage 'off'): Stryker cannot see coverage inside a child.
// The test harnesses pass the active mutant to those children (test/support/childEnv.ts) and the
// global setup rebuilds dist/ from Stryker's instrumented sandbox.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

/** module name -> files mutated, tests that pin them (globs), coverage analysis. */
export const MODULES = {
  postureQueue: { mutate: ['src/agent/state/postureQueue.ts'], tests: ['test/daemon/postureQueue.test.ts'] },
  uploader: { mutate: ['src/agent/uploader.ts'], tests: ['test/daemon/uploader.test.ts'] },
  backoff: { mutate: ['src/agent/backoff.ts'], tests: ['test/daemon/backoff.test.ts'] },
  // The state owner's transactions, in process. stateCrash.test.ts (each step killed in a child) is
  // left out: its 13 child processes would run again for nearly every mutant (half a minute each).
  agentState: {
    mutate: ['src/agent/state/agentState.ts', 'src/agent/state/statusFile.ts'],
    tests: ['test/agent/agentState.test.ts', 'test/agent/stateFiles.test.ts'],
  },
  // The daemon's loop, its one-round form (`run --once`) and the server policy it follows, in process
  // with a fake clock.
  daemon: {
    mutate: ['src/agent/daemon.ts'],
    tests: [
      'test/daemon/stateMachine.test.ts',
      'test/daemon/daemonStates.test.ts',
      'test/daemon/daemonLog.test.ts',
      'test/daemon/runRound.test.ts',
      'test/daemon/daemonPolicy.test.ts',
      'test/daemon/requestCycle.test.ts',
      'test/daemon/checkRequest.test.ts',
      'test/daemon/reenrollRules.test.ts',
    ],
  },
  enrollmentInput: { mutate: ['src/cli/enrollmentInput.ts'], tests: ['test/agent/enrollmentInput.test.ts'] },
  // Recorded sessions replayed, no bus: dbusWire.test.ts (a dbus-daemon for every mutant) is left out.
  dbusWire: { mutate: ['src/linkHandler/dbusWire.ts'], tests: ['test/agent/dbusWireBytes.test.ts'] },
  // What a cycle changed, notified on a real session bus to a stand-in (issue 31).
  notifications: { mutate: ['src/agent/notifications.ts'], tests: ['test/agent/notifications.test.ts'] },
  // The macOS and Windows notification commands, scripts and escaping (issue 31; neither OS runs here).
  platformNotifiers: {
    mutate: ['src/platform/darwinNotify.ts', 'src/platform/windowsNotify.ts'],
    tests: ['test/agent/platformNotifiers.test.ts'],
  },
  // The Windows pipe endpoint's service side and host script, with a stand-in host (issue 31; no Windows here).
  windowsPipeEndpoint: {
    mutate: ['src/agent/windowsPipeEndpoint.ts', 'src/platform/windowsPowerShell.ts'],
    tests: ['test/agent/windowsPipeEndpoint.test.ts'],
  },
  serverUrl: {
    mutate: ['src/agent/serverUrl.ts', 'src/agent/enrollmentLink.ts', 'src/agent/enrollmentToken.ts'],
    tests: ['test/agent/inputValidation.test.ts', 'test/agent/enrollmentInput.test.ts'],
  },
  // One module per route, each with the server tests that drive that route (coverage 'off': see above).
  serverHeartbeat: {
    mutate: ['src/server/routes/heartbeat.ts'],
    tests: ['test/server/heartbeat.test.ts', 'test/server/rateLimits.test.ts'],
    coverage: 'off',
  },
  serverPostures: {
    mutate: ['src/server/routes/postures.ts'],
    tests: [
      'test/server/postures.test.ts',
      'test/server/posturesValidation.test.ts',
      'test/server/rateLimits.test.ts',
      'test/server/heartbeatWrites.test.ts',
      'test/server/checkKeyCap.test.ts',
    ],
    coverage: 'off',
  },
  serverEnroll: { mutate: ['src/server/routes/enroll.ts'], tests: ['test/server/enroll.test.ts'], coverage: 'off' },
  serverUnenroll: { mutate: ['src/server/routes/unenroll.ts'], tests: ['test/server/unenroll.test.ts'], coverage: 'off' },
  // serve.test.ts starts its servers inside tests: a mutant that stops start-up fails a test there, where
  // a failing beforeAll (http.test.ts) is only seen by the runner as skipped tests.
  serverHealth: {
    mutate: ['src/server/routes/health.ts'],
    tests: ['test/server/http.test.ts', 'test/server/serve.test.ts'],
    coverage: 'off',
  },
  heartbeatBatch: { mutate: ['src/server/heartbeatBatch.ts'], tests: ['test/server/heartbeatBatch.test.ts'] },
  // "Check again" requests as heartbeat answers and the page read them, in-process on a real store.
  checkRequests: { mutate: ['src/server/checkRequests.ts'], tests: ['test/server/checkRequests.test.ts'] },
  displayText: { mutate: ['src/server/displayText.ts'], tests: ['test/server/displayText.test.ts'] },
  signInThrottle: { mutate: ['src/server/console/signInThrottle.ts'], tests: ['test/console/signInThrottle.test.ts'] },
  // The rules, pure and on a real SQLite store, in-process (PostgreSQL's run of the same suite is
  // not in the mutation run: the narrowed run has the sqlite project only).
  deviceLifecycle: {
    mutate: ['src/server/deviceLifecycle.ts'],
    tests: ['test/server/deviceLifecycle.test.ts', 'test/server/registrationRules.test.ts'],
  },
  // Real SQLite errors, and PostgreSQL's and the network's as recorded by
  // test/server/postgres/failures.test.ts (which checks them live on the cluster) and replayed here.
  databaseErrors: {
    mutate: ['src/server/databaseErrors.ts', 'src/server/db/failures.ts'],
    tests: ['test/server/databaseFailures.test.ts'],
  },
  firewallLinux: {
    mutate: ['checks/linux/firewall.ts', 'checks/linux/firewallRules.ts'],
    // The readers' own tests; machine.test.ts and differential.test.ts run the real tools of this
    // machine (minutes per mutant, nothing a recorded output does not pin faster).
    tests: [
      'test/checks/linux/firewallRules.test.ts',
      'test/checks/linux/parsers.test.ts',
      'test/checks/linux/collectors.test.ts',
      'test/checks/fixtures.test.ts',
    ],
  },
  firewallDarwin: { mutate: ['checks/darwin/firewall.ts'], tests: ['test/checks/darwin/*.test.ts', 'test/checks/fixtures.test.ts'] },
  // Issue 32's macOS effect checks: the measured offset (TIME_SYNC) and the installed release (AUTO_UPDATE).
  timeSyncDarwin: { mutate: ['checks/darwin/timeSync.ts'], tests: ['test/checks/darwin/*.test.ts', 'test/checks/fixtures.test.ts'] },
  autoUpdateDarwin: { mutate: ['checks/darwin/autoUpdate.ts'], tests: ['test/checks/darwin/*.test.ts', 'test/checks/fixtures.test.ts'] },
  // The products malware.requiredAgents.DARWIN names, judged by their own reports, joined with Gatekeeper/XProtect.
  malwareDarwin: {
    mutate: ['checks/darwin/protectionAgents.ts', 'checks/darwin/malwareProtection.ts'],
    tests: ['test/checks/darwin/*.test.ts', 'test/checks/fixtures.test.ts'],
  },
  firewallWindows: { mutate: ['checks/windows/firewall.ts'], tests: ['test/checks/windows/*.test.ts', 'test/checks/fixtures.test.ts'] },
  firewallFreebsd: {
    mutate: ['checks/freebsd/firewall.ts', 'checks/freebsd/pf.ts', 'checks/freebsd/ipfw.ts', 'checks/freebsd/packetFilter.ts'],
    tests: ['test/checks/freebsd/*.test.ts', 'test/checks/fixtures.test.ts'],
  },
  // AUTO_UPDATE judged by its effect (issue 32): the Linux updaters with systemd's record and the
  // package databases, and FreeBSD's freebsd-update tag and pkg database.
  autoUpdateLinux: {
    mutate: ['checks/linux/autoUpdate.ts', 'checks/linux/systemd.ts', 'checks/linux/packageDatabases.ts', 'checks/updateEffect.ts'],
    tests: ['test/checks/linux/collectors.test.ts', 'test/checks/linux/parsers.test.ts', 'test/checks/fixtures.test.ts'],
  },
  // unattended-upgrades' allowed origins against the archives fetched (LINUX AUTO_UPDATE).
  aptOrigins: {
    mutate: ['checks/linux/aptOrigins.ts'],
    tests: ['test/checks/linux/aptOrigins.test.ts', 'test/checks/linux/collectors.test.ts'],
  },
  autoUpdateFreebsd: {
    mutate: ['checks/freebsd/autoUpdate.ts', 'checks/freebsd/version.ts'],
    tests: ['test/checks/freebsd/*.test.ts', 'test/checks/fixtures.test.ts'],
  },
  // OS_VERSION's shared lifecycle rule and the Linux check: the rule's own tests, the os-release
  // corpus (155 real files) and every recorded fixture (all platforms call the rule).
  osVersionLinux: {
    mutate: ['checks/release.ts', 'checks/linux/osVersion.ts'],
    tests: [
      'test/checks/release.test.ts',
      'test/checks/linux/osVersion.test.ts',
      'test/checks/linux/osReleaseCorpus.test.ts',
      'test/checks/linux/parsers.test.ts',
      'test/checks/fixtures.test.ts',
    ],
  },
  // Protection agents judged by their own reports on Linux (Defender, Falcon, SentinelOne; the shared reader; Defender's JSON report read on macOS).
  agentHealth: {
    mutate: ['checks/agentHealth.ts', 'checks/mdatp.ts', 'checks/linux/falconctl.ts', 'checks/linux/sentinelctl.ts'],
    tests: [
      'test/checks/linux/agentHealth.test.ts',
      'test/checks/linux/mdatp.test.ts',
      'test/checks/darwin/protectionAgents.test.ts',
      'test/checks/fixtures.test.ts',
    ],
  },
};

const REPORT = (name) => `reports/mutation/${name}.json`;

function run(name, strykerOptions) {
  const spec = MODULES[name];
  rmSync(REPORT(name), { force: true });
  const result = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs', ...strykerOptions], {
    stdio: 'inherit',
    env: {
      ...process.env,
      STRYKER_MUTATE: spec.mutate.join(','),
      STRYKER_COVERAGE: spec.coverage ?? 'perTest',
      STRYKER_REPORT: REPORT(name),
      DEVICE_AGENT_TEST_FILES: spec.tests.join(','),
    },
  });
  if (!existsSync(REPORT(name))) return { name, error: `stryker exited ${result.status} without a report` };
  return { name, ...score(JSON.parse(readFileSync(REPORT(name), 'utf8'))) };
}

/** Stryker's mutation score: detected / (detected + undetected), over valid mutants. */
function score(report) {
  const count = {};
  const survivors = [];
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    for (const m of mutants) {
      count[m.status] = (count[m.status] ?? 0) + 1;
      if (m.status === 'Survived' || m.status === 'NoCoverage') {
        survivors.push(
          `${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} ${m.status}: ${lines[m.location.start.line - 1].trim().slice(0, 100)} -> ${(m.replacement ?? '').slice(0, 60)}`,
        );
      }
    }
  }
  const detected = (count.Killed ?? 0) + (count.Timeout ?? 0);
  const undetected = (count.Survived ?? 0) + (count.NoCoverage ?? 0);
  return { score: (100 * detected) / Math.max(1, detected + undetected), detected, undetected, survivors };
}

const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith('--'));
const wanted = firstOption === -1 ? args : args.slice(0, firstOption);
const strykerOptions = firstOption === -1 ? [] : args.slice(firstOption);
const unknown = wanted.filter((n) => !(n in MODULES));
if (unknown.length > 0) {
  console.error(`unknown module(s): ${unknown.join(', ')}; known: ${Object.keys(MODULES).join(', ')}`);
  process.exit(2);
}
const results = (wanted.length > 0 ? wanted : Object.keys(MODULES)).map((name) => run(name, strykerOptions));
console.log('\nmutation score per module (goal: >= 90 %)');
for (const r of results) {
  if (r.error) console.log(`  ${r.name.padEnd(16)} ERROR ${r.error}`);
  else console.log(`  ${r.name.padEnd(16)} ${r.score.toFixed(1).padStart(5)} %  (${r.detected} detected, ${r.undetected} undetected)`);
}
for (const r of results.filter((x) => x.survivors?.length)) {
  console.log(`\n${r.name}: undetected mutants`);
  for (const s of r.survivors) console.log(`  ${s}`);
}
process.exit(results.some((r) => r.error) ? 1 : 0);
