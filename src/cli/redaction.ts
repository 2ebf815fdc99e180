// What counts as a credential in text the agent prints or shows: a run of 96+ hex digits (token or
// key) and an enrollment link. Free of imports, so that processTitle.ts can run before anything else.
const LINK = /[a-z][a-z0-9+.-]*:\/\/enroll[^\s'"]*/gi;
const HEX_RUN = /[0-9a-fA-F]{96,}/g;

/**
 * Last line of defence for anything printed on a failure path: a 96-hex run (token or key) or an
 * enrollment link never reaches the terminal, even when echoed by a library (e.g. an unknown option).
 */
export function redactCredentials(text: string): string {
  return text.replace(LINK, '[enrollment link]').replace(HEX_RUN, '[redacted]');
}

/** Options whose value is a secret of no recognisable shape (refused later, but never shown meanwhile). */
const SECRET_OPTION = '--enroll-secret';

/**
 * The process title for these arguments: `device-agent` and every argument that holds no credential
 * (nor follows --enroll-secret, unless it is `-`).
 */
export function processTitle(args: readonly string[]): string {
  const kept = args.filter(
    (arg, i) => redactCredentials(arg) === arg && !arg.startsWith(`${SECRET_OPTION}=`) && !(args[i - 1] === SECRET_OPTION && arg !== '-'),
  );
  return ['device-agent', ...kept].join(' ');
}
