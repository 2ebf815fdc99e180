// Only the version field: esbuild then inlines one string, not the whole package.json.
import { version } from '../package.json';

export const VERSION: string = version;
export const USER_AGENT = `device-agent/${VERSION}`;
