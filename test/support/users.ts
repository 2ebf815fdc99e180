// A second real user on this machine, for tests run as root that need one (the local endpoint's
// console user, the session bus a root service notifies): created once as a system user without a
// home or a login shell, and kept.
import { execFileSync } from 'node:child_process';

export function systemUser(name: string): { uid: number; gid: number } {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}
