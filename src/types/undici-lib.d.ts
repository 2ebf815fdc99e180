// The files of undici that src/agent/undiciParts.ts imports one by one, with the types of undici's
// public API for what each exports.
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import { EnvHttpProxyAgent } from 'undici';
  export = EnvHttpProxyAgent;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import { Dispatcher } from 'undici';
  export = Dispatcher;
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export = buildConnector;
}
/** request(), stream(), pipeline(), upgrade(), connect(): the methods undici's index gives every dispatcher. */
declare module 'undici/lib/api/index.js' {
  const methods: Readonly<Record<'request' | 'stream' | 'pipeline' | 'upgrade' | 'connect', (...args: never[]) => unknown>>;
  export = methods;
}
