// The agent's Debian package in a booted Debian 12 (systemd-nspawn -b, systemd as PID 1), installed
// as a fleet's managed install is (issue 28): enroll.env with DEVICE_AGENT_ENROLL_SECRET, then dpkg;
// the package hook enrolls through /register, deletes enroll.env, starts the service, and the device
// turns ACTIVE at the real reference server running on this machine (the container shares its
// network). The secret appears in no journal line, status output or state file.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDeb } from '../../installers/build';
import { BOOTED_TOOLS, Container, rootfsTarball, until } from '../support/bootedContainer';
import { tempDir } from '../support/agent';
import { requireTools } from '../support/requireTools';
import { runServerCli, startServer, type RunningServer } from '../support/server';
import { buildLinuxSea, SEA_BUILD_TOOLS } from './seaBuild';

const UNIT = 'device-agent';
const isRoot = process.getuid?.() === 0;
const booted = requireTools([...BOOTED_TOOLS, ...SEA_BUILD_TOOLS], "the agent's .deb in a booted Debian 12 (systemd-nspawn)");
const canRun = isRoot && !booted.skip;

describe.skipIf(!canRun)(isRoot ? booted.title : `${booted.title}: skipped, needs root`, () => {
  let container: Container;
  let server: RunningServer;
  let deb: string;

  beforeAll(async () => {
    const seaDir = await buildLinuxSea();
    deb = buildDeb({ arch: 'x64', outDir: tempDir('device-agent-debs-'), seaDir, compression: 'gzip' });
    server = await startServer();
    const dir = tempDir('device-agent-rootfs-');
    execFileSync('tar', ['-xf', rootfsTarball(), '-C', dir]);
    execFileSync('cp', [deb, join(dir, 'root', 'device-agent.deb')]);
    container = new Container(dir, UNIT);
    await container.boot();
  }, 900_000);
  afterAll(async () => {
    await container?.powerOff().catch(() => container.kill());
    if (container) rmSync(container.dir, { recursive: true, force: true });
    await server?.stop();
  }, 60_000);

  it('installs with DEVICE_AGENT_ENROLL_SECRET in enroll.env: enrolled by the secret, enroll.env deleted, the service running, the device ACTIVE', async () => {
    const secret = JSON.parse(
      (await runServerCli(['secret', 'create', '--db', server.dbPath, '--org', 'booted', '--max-uses', '5', '--json'])).stdout,
    ) as { secret_id: string; enroll_secret: string };
    // As an MDM or Ansible writes it: root-only, the same text on every machine.
    container.run(['sh', '-ec', 'install -d -m 0700 /etc/device-agent && umask 077 && cat > /etc/device-agent/enroll.env'], {
      input: `DEVICE_AGENT_SERVER=${server.url}\nDEVICE_AGENT_ENROLL_SECRET=${secret.enroll_secret}\n`,
    });
    const installed = container.run(['dpkg', '-i', '/root/device-agent.deb']);
    expect(`${installed.stdout}${installed.stderr}`).not.toContain(secret.enroll_secret.slice(4));
    expect(container.run(['test', '-e', '/etc/device-agent/enroll.env'], { check: false }).code, 'enroll.env deleted').toBe(1);
    expect(container.run(['systemctl', 'is-enabled', UNIT]).stdout.trim()).toBe('enabled');

    const status = JSON.parse(container.run(['device-agent', 'status', '--json']).stdout) as {
      enrolled: boolean;
      enrolled_with: unknown;
    };
    expect(status).toMatchObject({ enrolled: true, enrolled_with: { method: 'enroll_secret', secret_id: secret.secret_id } });

    // The service's first heartbeat activates the device.
    const device = await until(
      'the device ACTIVE',
      async () => {
        const devices = JSON.parse((await runServerCli(['device', 'list', '--db', server.dbPath, '--org', 'booted', '--json'])).stdout) as {
          device_id: string;
          state: string;
        }[];
        return devices.find((d) => d.state === 'ACTIVE');
      },
      180_000,
    );
    expect(await server.showDevice(device.device_id)).toMatchObject({ state: 'ACTIVE', enroll_secret_id: secret.secret_id });
    expect(container.run(['systemctl', 'is-active', UNIT]).stdout.trim()).toBe('active');

    const journal = container.run(['journalctl', '--no-pager', '-o', 'cat']).stdout;
    const stateFiles = container.sh('cat /var/lib/device-agent/*.json');
    for (const text of [journal, stateFiles, server.logs()]) expect(text).not.toContain(secret.enroll_secret.slice(4));
  }, 600_000);
});
