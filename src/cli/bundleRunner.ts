// Runs the agent's bundle (an entry point, `device-agent.cjs`, and chunks it requires by relative
// path: scripts/build.mjs) from somewhere other than node_modules' loader: the single executable's
// assets (seaMain.ts), or the bundle's files while a package is made, to record each file's V8 code
// cache (scripts/seaCodeCache.ts). One loader for both, so that a recorded cache matches the source
// the executable compiles, byte for byte. Everything else the agent requires is a Node built-in.
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import { Script } from 'node:vm';

/** Suffix of a bundle file's code cache among the executable's assets. */
export const CODE_CACHE_SUFFIX = '.v8cache';

export interface BundleSource {
  /** A bundle file's text, by its path relative to the bundle (posix separators). */
  text(file: string): string;
  /** Its recorded V8 code cache, if any. */
  codeCache(file: string): Buffer | undefined;
}

export interface CompiledFile {
  file: string;
  script: Script;
  /** Whether V8 refused the recorded cache (another V8 version or flags); undefined when there was none. */
  cacheRejected: boolean | undefined;
}

type CommonJsModule = { exports: unknown };

/**
 * Runs `device-agent.cjs` as if from `directory` (its `__filename`). `compiled` hears of each file
 * once it is compiled, before it runs.
 */
export function runBundle(source: BundleSource, directory: string, compiled: (file: CompiledFile) => void): void {
  const loaded = new Map<string, CommonJsModule>();
  const requireBuiltin = createRequire(join(directory, 'device-agent.cjs'));
  const load = (file: string): unknown => {
    const cached = loaded.get(file);
    if (cached) return cached.exports;
    const module: CommonJsModule = { exports: {} };
    loaded.set(file, module);
    const filename = join(directory, file);
    // The same wrapper as Node's CommonJS loader; a `#!` line becomes a comment of the same length.
    const text = source.text(file).replace(/^#!/, '//');
    const cachedData = source.codeCache(file);
    const script = new Script(`(function (exports, require, module, __filename, __dirname) {${text}\n})`, {
      filename,
      ...(cachedData ? { cachedData } : {}),
    });
    compiled({ file, script, cacheRejected: cachedData ? script.cachedDataRejected === true : undefined });
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    const requireFrom = (specifier: string): unknown =>
      specifier.startsWith('./') || specifier.startsWith('../')
        ? load(posix.join(posix.dirname(file), specifier))
        : requireBuiltin(specifier);
    run.call(module.exports, module.exports, requireFrom, module, filename, dirname(filename));
    return module.exports;
  };
  load('device-agent.cjs');
}
