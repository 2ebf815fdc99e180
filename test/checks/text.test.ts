// The shared line-oriented parsers (checks/text.ts) that checks on several platforms use.
import { describe, expect, it } from 'vitest';
import { ageInDays, parseBoolean, parseIni, parseKeyValue, parseShellAssignments } from '../../checks/text';

describe('parseIni', () => {
  it('reads sections, keeps keys as written, and treats only whole-line # and ; as comments', () => {
    const text = [
      'top=1',
      '# comment',
      '; also a comment',
      '[commands]',
      'apply_updates = yes',
      'Colour=#ff0000',
      '[Daemon][$i]',
      'Timeout=10',
      'Timeout=15',
    ].join('\n');
    expect(parseIni(text)).toEqual({ '': { top: '1' }, commands: { apply_updates: 'yes', Colour: '#ff0000' }, Daemon: { Timeout: '15' } });
  });

  it('ignores lines without a key', () => {
    expect(parseIni('[a]\n=value\nnoequals\n')).toEqual({});
  });
});

describe('parseBoolean', () => {
  it('knows the yes/no token pairs in any case and nothing else', () => {
    expect(['yes', 'TRUE', ' on ', '1'].map(parseBoolean)).toEqual([true, true, true, true]);
    expect(['No', 'false', 'OFF', '0'].map(parseBoolean)).toEqual([false, false, false, false]);
    expect(['yes please', '', '2', undefined].map(parseBoolean)).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('key/value readers', () => {
  it('splits KEY=value at the first = and unquotes shell assignments', () => {
    expect(parseKeyValue('NTP=yes\nURL=a=b\n=x\n')).toEqual({ NTP: 'yes', URL: 'a=b' });
    expect(parseShellAssignments('# c\nID=debian\nNAME="Debian \\"GNU\\""\nX=\'a b\'\n')).toEqual({
      ID: 'debian',
      NAME: 'Debian "GNU"',
      X: 'a b',
    });
  });
});

describe('ageInDays', () => {
  it('floors whole days and never goes negative', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    expect(ageInDays(Date.parse('2026-11-18T12:00:01Z'), now)).toBe(2);
    expect(ageInDays(Date.parse('2026-11-22T00:00:00Z'), now)).toBe(0);
  });
});
