// Types of scripts/build.mjs for the TypeScript that imports it (installers/build.ts, tests, benchmarks).
/** Packages left outside the bundles: native addons. */
export const external: string[];
/** The directory, beside the agent's entry point device-agent.cjs, that holds the chunks it loads on demand. */
export const AGENT_CHUNK_DIR: string;
/** Builds the agent into `outdir`; returns the written files (entry point and chunks), relative to `outdir`. */
export function buildAgent(options: { outdir: string; minify?: boolean }): Promise<string[]>;
/** Beside the agent's entry point: JSON, each file of the agent (relative path) -> the source modules it carries. */
export const AGENT_INPUTS: string;
/** How the agent's code is bundled (esbuild options), for what the benchmarks bundle the same way. */
export const agentBundleOptions: import('esbuild').BuildOptions;
