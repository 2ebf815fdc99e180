// The parts of undici (the stack's HTTP client) that the agent uses, each loaded from its own file.
// undici's index loads all of undici (fetch, WebSocket, EventSource, caches, mocks, interceptors:
// most of its 1 MB once bundled), and the daemon would keep it compiled for months: loading only
// these keeps several MiB out of its resident memory (`npm run bench:footprint`,
// docs/performance.md). undici 7 has no `exports` map, so its files are importable
// (src/types/undici-lib.d.ts types them); the version is pinned in package.json, and
// test/agent/client.test.ts and https.test.ts run every path (direct, TLS, proxies) through them.
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import dispatcherMethods from 'undici/lib/api/index.js';

// What undici's index does first: every dispatcher gets request(), connect() and the other methods
// (a proxy agent opens its tunnel with connect()).
Object.assign(Dispatcher.prototype, dispatcherMethods);

export { default as Agent } from 'undici/lib/dispatcher/agent.js';
export { default as EnvHttpProxyAgent } from 'undici/lib/dispatcher/env-http-proxy-agent.js';
export { default as buildConnector } from 'undici/lib/core/connect.js';
