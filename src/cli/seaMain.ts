// The single executable's main script (scripts/package.mjs). The agent is an entry point and chunks
// loaded on demand (scripts/build.mjs), carried as assets of the executable under their paths
// relative to dist/: this loader runs the entry and, when it requires `./<chunk>.cjs`, compiles that
// asset, once. Everything else the agent requires is a Node built-in module (the keyring addon is
// loaded with process.dlopen from beside the executable: src/platform/keyringModule.ts).
import { createRequire } from 'node:module';
import { getAsset } from 'node:sea';
import { dirname, join, posix } from 'node:path';
import { compileFunction } from 'node:vm';

type CommonJsModule = { exports: unknown };

const loaded = new Map<string, CommonJsModule>();
const requireBuiltin = createRequire(process.execPath);

function load(asset: string): unknown {
  const cached = loaded.get(asset);
  if (cached) return cached.exports;
  const module: CommonJsModule = { exports: {} };
  loaded.set(asset, module);
  const filename = join(dirname(process.execPath), asset);
  const run = compileFunction(getAsset(asset, 'utf8'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
  const requireFrom = (specifier: string): unknown =>
    specifier.startsWith('./') || specifier.startsWith('../')
      ? load(posix.join(posix.dirname(asset), specifier))
      : requireBuiltin(specifier);
  run.call(module.exports, module.exports, requireFrom, module, filename, dirname(filename));
  return module.exports;
}

load('device-agent.cjs');
