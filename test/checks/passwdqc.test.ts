// pam_passwdqc's options as LINUX and FREEBSD PASSWORD_POLICY read them (checks/passwdqc.ts).
import { describe, expect, it } from 'vitest';
import {
  PASSWDQC_DEFAULTS,
  passwdqcConfigFiles,
  passwdqcMinLength,
  passwdqcMinText,
  passwdqcRequiresClasses,
  passwdqcSettings,
} from '../../checks/passwdqc';

describe('passwdqc options', () => {
  it('applies options in order and rejects malformed ones', () => {
    expect(passwdqcSettings(['min=disabled,disabled,disabled,disabled,12', 'min=disabled,24,11,9,9'], {})).toEqual({
      min: [null, 24, 11, 9, 9],
      enforce: 'everyone',
    });
    expect(passwdqcSettings(['min=8,8'], {})).toEqual({ error: 'invalid_min' });
    expect(passwdqcSettings(['enforce=sometimes'], {})).toEqual({ error: 'invalid_enforce' });
    expect(passwdqcSettings(['config=/missing'], {})).toEqual({ error: 'config_unreadable' });
    expect(passwdqcSettings(['config=/denied'], { '/denied': { ok: false, error: 'permission_denied' } })).toEqual({
      error: 'config_unreadable',
    });
  });

  it('applies a config= file in place, so later options still win', () => {
    const files = {
      '/etc/passwdqc.conf': { ok: true as const, text: '# site\nmin=disabled,disabled,disabled,disabled,14\nenforce=users\n' },
    };
    expect(passwdqcConfigFiles(['retry=3', 'config=/etc/passwdqc.conf'])).toEqual(['/etc/passwdqc.conf']);
    expect(passwdqcSettings(['config=/etc/passwdqc.conf', 'enforce=everyone'], files)).toEqual({
      min: [null, null, null, null, 14],
      enforce: 'everyone',
    });
  });

  it('derives the shortest accepted password and whether one- and two-class passwords are refused', () => {
    expect(passwdqcMinLength(PASSWDQC_DEFAULTS)).toBe(7);
    expect(passwdqcRequiresClasses(PASSWDQC_DEFAULTS)).toBe(false);
    const strict = { min: [null, null, 16, 12, 12], enforce: 'everyone' as const };
    expect([passwdqcMinLength(strict), passwdqcRequiresClasses(strict), passwdqcMinText(strict)]).toEqual([
      12,
      true,
      'disabled,disabled,16,12,12',
    ]);
    expect(passwdqcMinLength({ min: [null, null, null, null, null], enforce: 'everyone' })).toBeNull();
  });
});
