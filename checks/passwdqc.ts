// pam_passwdqc's options, read the same way wherever the module is in a PAM password stack (FreeBSD's
// base system, Linux distributions that ship it): passwdqc.conf(5) and pam_passwdqc(8).
import type { FileResult } from './types';

export interface PasswdqcSettings {
  /** min=N0,N1,N2,N3,N4: the shortest password per number of character classes (N2: passphrases); null = disabled. */
  min: (number | null)[];
  /** none: only warn; users: not for root; everyone. */
  enforce: 'none' | 'users' | 'everyone';
}

export type PasswdqcProblem = 'invalid_min' | 'invalid_enforce' | 'config_unreadable';

/** pam_passwdqc's built-in defaults. */
export const PASSWDQC_DEFAULTS: PasswdqcSettings = { min: [null, 24, 11, 8, 7], enforce: 'everyone' };

const ENFORCE = ['none', 'users', 'everyone'] as const;

/** The files `config=` options name: the collector reads them, the settings apply them in place. */
export function passwdqcConfigFiles(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('config=')).map((o) => o.slice('config='.length));
}

/** Applies the module's options in order (`config=` files in place, from `files`); a malformed option is a problem, not a guess. */
export function passwdqcSettings(
  options: readonly string[],
  files: Readonly<Record<string, FileResult>>,
): PasswdqcSettings | { error: PasswdqcProblem } {
  const settings: PasswdqcSettings = { min: [...PASSWDQC_DEFAULTS.min], enforce: PASSWDQC_DEFAULTS.enforce };
  const apply = (option: string, depth: number): PasswdqcProblem | null => {
    const [key, ...rest] = option.split('=');
    const value = rest.join('=');
    if (key === 'min') {
      const parts = value.split(',');
      if (parts.length !== 5 || !parts.every((p) => p === 'disabled' || /^\d+$/.test(p))) return 'invalid_min';
      settings.min = parts.map((p) => (p === 'disabled' ? null : Number(p)));
    } else if (key === 'enforce') {
      const enforce = ENFORCE.find((e) => e === value);
      if (!enforce) return 'invalid_enforce';
      settings.enforce = enforce;
    } else if (key === 'config') {
      const file = files[value];
      if (!file || !file.ok || depth > 3) return 'config_unreadable';
      for (const line of file.text.split('\n').map((l) => l.trim())) {
        if (line === '' || line.startsWith('#')) continue;
        const problem = apply(line, depth + 1);
        if (problem) return problem;
      }
    }
    return null;
  };
  for (const option of options) {
    const problem = apply(option, 0);
    if (problem) return { error: problem };
  }
  return settings;
}

/** The shortest password any enabled class accepts; null when every class is disabled. */
export function passwdqcMinLength(settings: PasswdqcSettings): number | null {
  const enabled = settings.min.filter((m): m is number => m !== null);
  return enabled.length > 0 ? Math.min(...enabled) : null;
}

/** With N0 and N1 disabled, passwords of one or two character classes are refused. */
export function passwdqcRequiresClasses(settings: PasswdqcSettings): boolean {
  return settings.min[0] === null && settings.min[1] === null;
}

/** `min=` as passwdqc writes it, for evidence. */
export function passwdqcMinText(settings: PasswdqcSettings): string {
  return settings.min.map((m) => (m === null ? 'disabled' : String(m))).join(',');
}
