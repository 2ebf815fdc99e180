// /etc/passwd as LINUX and FREEBSD SCREEN_LOCK read it to act in a session user's context (checks/passwd.ts).
import { describe, expect, it } from 'vitest';
import { parsePasswd } from '../../checks/passwd';

describe('/etc/passwd', () => {
  it('keeps uid, gid and absolute home directories only', () => {
    const accounts = parsePasswd(
      '# comment\nalice:*:1001:1001:Alice:/home/alice:/bin/sh\nodd:*:1002:1002::-n:/bin/sh\nrel:x:1004:1004::home/rel:/bin/sh\nshort:*:1003\n',
    );
    expect([...accounts.entries()]).toEqual([[1001, { uid: 1001, gid: 1001, home: '/home/alice' }]]);
  });

  it('takes the first line for a uid, as getpwuid does', () => {
    const accounts = parsePasswd('toor:*:0:0:Bourne-again Superuser:/root:\nroot:*:0:0:Charlie &:/root2:/bin/csh\n');
    expect(accounts.get(0)).toEqual({ uid: 0, gid: 0, home: '/root' });
  });
});
