// Container detection (research §0.7): markers alone are not proof. A Firecracker microVM can
// carry /.dockerenv while its root is a real ext4 disk; what settles it is whether `/` is a whole
// filesystem on a local block device (a machine) or an overlay, a directory or a dataset handed
// in by a host. Host-level controls in a container follow policy.containers.mode.
import type { Policy } from '../policy';
import type { CheckContext } from '../types';
import { containersModeVerdict } from '../verdict';
import { BLOCK_FILESYSTEMS, mountTable, rootMount, type MountEntry } from './mounts';

export interface ContainerFacts {
  /** Container markers found: dockerenv, containerenv, container_manager, pid1_container_env. */
  signals: string[];
  /** `/` is a whole filesystem on a local block device. */
  machineRoot: boolean;
  detected: boolean;
}

/** A root that a machine boots from, not one a container runtime prepared. */
function isMachineRoot(root: MountEntry | undefined): boolean {
  if (!root || !root.source.startsWith('/dev/') || !BLOCK_FILESYSTEMS.has(root.fstype)) return false;
  // Btrfs roots are usually a top-level subvolume ("/@", "/@rootfs"); deeper paths are bind or
  // runtime-made subvolumes (Docker's btrfs driver).
  return root.root === '/' || (root.fstype === 'btrfs' && /^\/@[^/]*$/.test(root.root));
}

export function judgeContainer(signals: string[], root: MountEntry | undefined): ContainerFacts {
  const machineRoot = isMachineRoot(root);
  return { signals, machineRoot, detected: signals.length > 0 && !machineRoot };
}

export function containerFacts(ctx: CheckContext): Promise<ContainerFacts> {
  return ctx.shared('linux.container', async () => {
    const { host } = ctx;
    const [dockerenv, containerenv, manager, environ, mounts] = await Promise.all([
      host.stat('/.dockerenv'),
      host.stat('/run/.containerenv'),
      host.stat('/run/host/container-manager'),
      host.readFile('/proc/1/environ'),
      mountTable(ctx),
    ]);
    const signals: string[] = [];
    if (dockerenv.ok) signals.push('dockerenv');
    if (containerenv.ok) signals.push('containerenv');
    if (manager.ok) signals.push('container_manager');
    if (environ.ok && environ.text.split('\0').some((v) => /^container=./.test(v))) signals.push('pid1_container_env');
    return judgeContainer(signals, mounts.ok ? rootMount(mounts.mounts) : undefined);
  });
}

/** Evidence fields describing the container decision, only when there is something to say. */
export function containerEvidence(facts: ContainerFacts): Record<string, unknown> {
  return facts.signals.length > 0 ? { container: facts.detected, container_signals: facts.signals } : {};
}

/** The verdict for a host-level control inside a container (policy.containers.mode), or null outside one. */
export function containerVerdict(facts: ContainerFacts, policy: Policy) {
  return facts.detected ? containersModeVerdict(policy, 'container', containerEvidence(facts)) : null;
}
