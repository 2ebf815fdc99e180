// crontab(5) entries and the shell command lines they run, read the way cron and sh(1) would:
// comments, environment lines, "@daily" specials, the user field of system crontabs, and
// commands joined by ";", "&&", "||" or "|", quoted or wrapped in "sh -c".

export interface CronFile {
  /** Command lines of the entries, in file order. */
  commands: string[];
  /** NAME=value lines (they apply to every entry of the file). */
  environment: Record<string, string>;
}

/** `system`: /etc/crontab and cron.d files, whose entries carry a user field; root's own crontab has none. */
export function parseCrontab(text: string, system: boolean): CronFile {
  const commands: string[] = [];
  const environment: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const env = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (env) {
      environment[env[1]!] = unquoteWord(env[2]!);
      continue;
    }
    const fields = line.split(/\s+/);
    let skip = (fields[0]!.startsWith('@') ? 1 : 5) + (system ? 1 : 0);
    // FreeBSD cron options before the command: -n (no mail), -q (no log), -s (single instance).
    while (skip < fields.length && /^-[nqs]+$/.test(fields[skip]!)) skip++;
    if (skip < fields.length) commands.push(afterFields(line, skip));
  }
  return { commands, environment };
}

function afterFields(line: string, count: number): string {
  let rest = line;
  for (let i = 0; i < count; i++) rest = rest.replace(/^\S+\s+/, '');
  return rest;
}

function unquoteWord(value: string): string {
  const words = shellWords(value);
  return words.length === 1 && typeof words[0] === 'string' ? words[0] : value;
}

type Word = string | { operator: string };

/** Splits a command line into words and operators as sh(1) would, without expansions. */
export function shellWords(line: string): Word[] {
  const words: Word[] = [];
  let current: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      current = (current ?? '') + line.slice(i + 1, end === -1 ? line.length : end);
      i = end === -1 ? line.length : end;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; j < line.length && line[j] !== '"'; j++) text += line[j] === '\\' && j + 1 < line.length ? line[++j] : line[j];
      current = (current ?? '') + text;
      i = j;
    } else if (c === '\\' && i + 1 < line.length) {
      current = (current ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      if (current !== null) words.push(current);
      current = null;
    } else if (c === ';' || c === '&' || c === '|') {
      if (current !== null) words.push(current);
      current = null;
      const double = line[i + 1] === c && c !== ';';
      words.push({ operator: double ? c + c : c });
      if (double) i++;
    } else current = (current ?? '') + c;
  }
  if (current !== null) words.push(current);
  return words;
}

/** Wrappers that run the rest of their arguments as a command: options taking a value, and positional arguments before the command. */
const WRAPPERS: Record<string, { optionArgs: readonly string[]; positionals: number }> = {
  env: { optionArgs: ['-u', '-P', '-S'], positionals: 0 },
  nice: { optionArgs: ['-n'], positionals: 0 },
  nohup: { optionArgs: [], positionals: 0 },
  lockf: { optionArgs: ['-t'], positionals: 1 },
  timeout: { optionArgs: ['-s', '-k'], positionals: 1 },
  daemon: { optionArgs: ['-p', '-P', '-o', '-t', '-u', '-T', '-m', '-l', '-R', '-s'], positionals: 0 },
};
/**
 * The simple commands a command line runs, each as [program basename, ...arguments] with
 * wrappers (env, nice, nohup, lockf, timeout, daemon) and "sh -c '…'" unwrapped, and variable
 * assignments gathered into `env`.
 */
export function simpleCommands(line: string, depth = 0): { argv: string[]; env: Record<string, string> }[] {
  const out: { argv: string[]; env: Record<string, string> }[] = [];
  let words: string[] = [];
  const flush = () => {
    if (words.length > 0) out.push(...unwrap(words, depth));
    words = [];
  };
  for (const w of shellWords(line)) {
    if (typeof w === 'string') words.push(w);
    else flush();
  }
  flush();
  return out;
}

function unwrap(words: string[], depth: number): { argv: string[]; env: Record<string, string> }[] {
  const env: Record<string, string> = {};
  let i = 0;
  for (;;) {
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) {
      const [name, ...value] = words[i++]!.split('=');
      env[name!] = value.join('=');
    }
    const wrapper = WRAPPERS[basename(words[i] ?? '')];
    if (!wrapper) break;
    i++;
    while (i < words.length && words[i]!.startsWith('-')) i += wrapper.optionArgs.includes(words[i]!) ? 2 : 1;
    i += wrapper.positionals;
  }
  const program = basename(words[i] ?? '');
  if (program === '') return [];
  const argv = [program, ...words.slice(i + 1)];
  const script = argv[2];
  if (['sh', 'bash', 'csh', 'tcsh', 'zsh'].includes(program) && argv[1] === '-c' && script !== undefined && depth < 3) {
    return simpleCommands(script, depth + 1).map((c) => ({ argv: c.argv, env: { ...env, ...c.env } }));
  }
  return [{ argv, env }];
}

const basename = (path: string) => path.split('/').at(-1) ?? path;
