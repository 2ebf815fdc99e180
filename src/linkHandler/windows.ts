// Windows: the device-agent URL scheme under HKLM\Software\Classes (every user of the machine).
// The browser starts the agent with the link as the user's own process argument, which other
// non-administrator users cannot read.
import { LINK_SCHEME } from '../protocol/schemas';
import type { PlanStep } from '../service/plan';
import { OPEN_LINK_COMMAND, type LinkHandlerModule, type LinkHandlerSpec } from './types';

const SCHEME_KEY = `HKLM\\Software\\Classes\\${LINK_SCHEME}`;

/** The registry values, as (key, value name or null for the default, data). */
export function schemeRegistryValues(spec: LinkHandlerSpec): Array<[key: string, name: string | null, data: string]> {
  return [
    [SCHEME_KEY, null, 'URL:Device Agent enrollment link'],
    [SCHEME_KEY, 'URL Protocol', ''],
    [`${SCHEME_KEY}\\DefaultIcon`, null, `${spec.program[0] ?? ''},0`],
    // Quoted always: the program may be an MSI placeholder ([INSTALLFOLDER]) that expands to spaces.
    [`${SCHEME_KEY}\\shell\\open\\command`, null, `${spec.program.map((part) => `"${part}"`).join(' ')} ${OPEN_LINK_COMMAND} "%1"`],
  ];
}

export const windowsLinkHandler: LinkHandlerModule = {
  installSteps: (spec) =>
    schemeRegistryValues(spec).map(([key, name, data]): PlanStep => ({
      kind: 'run',
      argv: ['reg.exe', 'add', key, ...(name === null ? ['/ve'] : ['/v', name]), '/t', 'REG_SZ', '/d', data, '/f'],
    })),
  uninstallSteps: () => [{ kind: 'run', argv: ['reg.exe', 'delete', SCHEME_KEY, '/f'], mayFail: true }],
};
