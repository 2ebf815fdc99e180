// Where Linux tools are looked for: the usual path, then a fixed list of system directories; never PATH.
import { describe, expect, it } from 'vitest';
import { findTool, runTool, SYSTEM_TOOL_DIRS, toolCandidates } from '../../../checks/linux/tools';
import { FakeHost } from '../../support/fakeHost';

describe('system tool lookup', () => {
  it('tries the usual path first, then every other system directory once, NixOS last', () => {
    expect(toolCandidates('/usr/sbin/nft')).toEqual([
      '/usr/sbin/nft',
      '/usr/bin/nft',
      '/sbin/nft',
      '/bin/nft',
      '/usr/local/sbin/nft',
      '/usr/local/bin/nft',
      '/run/current-system/sw/bin/nft',
    ]);
    expect(toolCandidates('/usr/bin/timedatectl')).toHaveLength(SYSTEM_TOOL_DIRS.length);
    expect(toolCandidates('/usr/bin/timedatectl')[1]).toBe('/usr/sbin/timedatectl');
  });

  it('runs the tool from the first directory that holds it, and from its usual path when none does', async () => {
    const host = new FakeHost({
      commands: [{ argv: ['/run/current-system/sw/bin/nft', '-j', 'list', 'ruleset'], stdout: '{"nftables": []}' }],
      stats: { '/run/current-system/sw/bin/nft': {}, '/usr/local/sbin': { isDirectory: true } },
    });
    await expect(findTool(host, '/usr/sbin/nft')).resolves.toBe('/run/current-system/sw/bin/nft');
    await expect(runTool(host, '/usr/sbin/nft', ['-j', 'list', 'ruleset'])).resolves.toMatchObject({
      exitCode: 0,
      stdout: '{"nftables": []}',
    });
    await expect(findTool(host, '/usr/sbin/ufw')).resolves.toBeUndefined();
    await expect(runTool(host, '/usr/sbin/ufw', ['status'])).resolves.toMatchObject({ error: 'not_found' });
    expect(host.commandsRun().at(-1)).toEqual(['/usr/sbin/ufw', 'status']);
  });

  it("a directory by the tool's name is not the tool", async () => {
    const host = new FakeHost({ stats: { '/usr/sbin/zfs': { isDirectory: true }, '/sbin/zfs': {} } });
    await expect(findTool(host, '/usr/sbin/zfs')).resolves.toBe('/sbin/zfs');
  });
});
