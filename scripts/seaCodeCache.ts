// Records the V8 code cache of each bundle file a command compiles and runs, for the single
// executable (scripts/package.mjs, on the build machine's own target: a cache loads only on the V8
// version and flags that made it). Run by that target's Node runtime, once per warm-up command:
//   node sea-code-cache.cjs <bundle dir> <cache dir> -- <device-agent arguments>
// Each run starts from the caches earlier runs wrote and adds the functions it compiled, so the
// files shared by several commands carry what each of them runs.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Script } from 'node:vm';
import { CODE_CACHE_SUFFIX, runBundle } from '../src/cli/bundleRunner';

const [bundleDir, cacheDir, separator, ...args] = process.argv.slice(2);
if (!bundleDir || !cacheDir || separator !== '--') throw new Error('usage: sea-code-cache.cjs <bundle dir> <cache dir> -- <arguments>');
const cacheFile = (file: string) => join(cacheDir, `${file}${CODE_CACHE_SUFFIX}`);

const scripts = new Map<string, Script>();
// After the command ran (the caches then hold the functions it compiled lazily too), whatever way it exits.
process.on('exit', () => {
  for (const [file, script] of scripts) {
    mkdirSync(dirname(cacheFile(file)), { recursive: true });
    writeFileSync(cacheFile(file), script.createCachedData());
  }
});
process.argv = [process.execPath, join(bundleDir, 'device-agent.cjs'), ...args];
runBundle(
  {
    text: (file) => readFileSync(join(bundleDir, file), 'utf8'),
    codeCache: (file) => (existsSync(cacheFile(file)) ? readFileSync(cacheFile(file)) : undefined),
  },
  bundleDir,
  ({ file, script, cacheRejected }) => {
    if (cacheRejected) throw new Error(`${file}: V8 refused the cache an earlier warm-up run recorded`);
    scripts.set(file, script);
  },
);
