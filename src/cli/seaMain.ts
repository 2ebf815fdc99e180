// The single executable's main script (scripts/package.mjs). The agent's bundle files are assets of
// the executable under their paths relative to dist/sea/, each with the V8 code cache recorded when
// the package was made (scripts/seaCodeCache.ts), so that a command neither parses nor compiles the
// code it runs. The keyring addon is loaded with process.dlopen from beside the executable
// (src/platform/keyringModule.ts). NODE_DEBUG=device-agent-sea names any cache V8 refused.
import { getAsset } from 'node:sea';
import { dirname } from 'node:path';
import { debuglog } from 'node:util';
import { CODE_CACHE_SUFFIX, runBundle } from './bundleRunner';

const debug = debuglog('device-agent-sea');

runBundle(
  {
    text: (file) => getAsset(file, 'utf8'),
    codeCache: (file) => {
      try {
        return Buffer.from(getAsset(`${file}${CODE_CACHE_SUFFIX}`));
      } catch {
        return undefined; // not recorded: a target other than the build machine's (scripts/package.mjs)
      }
    },
  },
  dirname(process.execPath),
  ({ file, cacheRejected }) =>
    debug('%s: %s', file, cacheRejected === undefined ? 'no code cache' : cacheRejected ? 'code cache rejected' : 'code cache used'),
);
