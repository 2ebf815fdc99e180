// The parts of undici (the stack's HTTP client) that the agent uses, each loaded from its own file.
// undici's index loads all of undici (fetch, WebSocket, EventSource, caches, mocks, interceptors:
// most of its 1 MB once bundled), and the daemon would keep it compiled for months: loading only
// these keeps several MiB out of its resident memory (`npm run bench:footprint`,
// docs/architecture.md). undici 7 has no `exports` map, so its files are importable; the version is
// pinned in package.json, and test/agent/client.test.ts runs every path (direct, TLS, proxies)
// through these parts.
import type * as Undici from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import EnvHttpProxyAgentClass from 'undici/lib/dispatcher/env-http-proxy-agent.js';
import buildConnectorFunction from 'undici/lib/core/connect.js';
import DispatcherClass from 'undici/lib/dispatcher/dispatcher.js';
import dispatcherMethods from 'undici/lib/api/index.js';

// What undici's index does first: every dispatcher gets request(), connect() and the other methods
// (a proxy agent opens its tunnel with connect()).
Object.assign((DispatcherClass as typeof Undici.Dispatcher).prototype, dispatcherMethods);

export const Agent: typeof Undici.Agent = AgentClass;
export const EnvHttpProxyAgent: typeof Undici.EnvHttpProxyAgent = EnvHttpProxyAgentClass;
export const buildConnector: typeof Undici.buildConnector = buildConnectorFunction;
