// macOS: URLs reach an app through Apple Events, not through argv, so the handler is a small
// AppleScript applet (compiled on the Mac by osacompile) whose Info.plist declares the scheme. It
// writes the link to the user's private temporary folder, asks the agent for the server origin, asks
// the user to confirm, then runs the agent with administrator privileges (the system prompt) on the
// file: the link never appears on a command line.
import { posix } from 'node:path';
import { LINK_SCHEME } from '../protocol/schemas';
import { quotePosix, type PlanStep } from '../service/plan';
import { plist } from '../service/plist';
import { VERSION } from '../version';
import { OPEN_LINK_COMMAND, type LinkHandlerModule, type LinkHandlerSpec } from './types';

const APP_PATH = '/Applications/Device Agent.app';
const APP_BUNDLE_ID = 'org.device-agent.link-handler';
export const SCRIPT_NAME = 'link-handler.applescript';
const LSREGISTER = '/System/Library/Frameworks/CoreServices.framework/Frameworks/LaunchServices.framework/Support/lsregister';

function appleScriptString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The "My device posture" app's script, compiled by the package's build script into /Applications. */
export const MY_DEVICE_SCRIPT_NAME = 'my-device.applescript';

/**
 * "My device posture" (an applet the macOS package installs): runs `device-agent my-device` as the
 * user who opens it (the service's local endpoint gives them the URL); a failure is shown in a dialog.
 */
export function myDeviceAppleScript(spec: Pick<LinkHandlerSpec, 'program'>): string {
  const command = appleScriptString([...spec.program, 'my-device'].map(quotePosix).join(' '));
  return `-- My device posture: this Mac's page on the device-agent server, for the user who opens it.
on run
\ttry
\t\tdo shell script ${command}
\ton error message
\t\tactivate
\t\tdisplay dialog message buttons {"OK"} default button "OK" with title "My device posture" with icon caution
\tend try
end run
`;
}

export function linkHandlerScript(spec: LinkHandlerSpec): string {
  const agent = appleScriptString([...spec.program, OPEN_LINK_COMMAND].map(quotePosix).join(' '));
  return `-- Device Agent: handler of ${LINK_SCHEME}:// enrollment links (written by device-agent install).
-- Shows the server a link enrolls this Mac with and asks before enrolling. The link goes through a
-- file in the user's private temporary folder, never through a command line.
property agentCommand : ${agent}
property dialogTitle : "Device Agent"

on run
\tactivate
\tdisplay dialog "Open a ${LINK_SCHEME}:// enrollment link from your IT department to enroll this Mac." buttons {"OK"} default button "OK" with title dialogTitle
end run

on open location linkText
\tset linkFile to (POSIX path of (path to temporary items from user domain)) & "device-agent-link-" & (do shell script "/usr/bin/uuidgen")
\ttry
\t\tset fileRef to open for access (POSIX file linkFile) with write permission
\t\tset eof fileRef to 0
\t\twrite linkText to fileRef
\t\tclose access fileRef
\t\tset serverOrigin to do shell script agentCommand & " --describe --link-file " & quoted form of linkFile
\t\tactivate
\t\tdisplay dialog "Enroll this Mac with the server" & return & return & serverOrigin & return & return & "Continue only if your IT department sent you this link." buttons {"Cancel", "Enroll"} default button "Cancel" cancel button "Cancel" with title dialogTitle with icon caution
\t\tset outcome to do shell script agentCommand & " --yes --link-file " & quoted form of linkFile with administrator privileges
\t\tactivate
\t\tdisplay dialog outcome buttons {"OK"} default button "OK" with title dialogTitle
\ton error errorText number errorNumber
\t\tif errorNumber is not -128 then
\t\t\tactivate
\t\t\tdisplay dialog errorText buttons {"OK"} default button "OK" with title dialogTitle with icon stop
\t\tend if
\tend try
\tdo shell script "/bin/rm -f " & quoted form of linkFile
end open location
`;
}

/** The applet's Info.plist: the applet keys osacompile sets, plus the URL scheme. */
export function appInfoPlist(): string {
  return plist({
    CFBundleDevelopmentRegion: 'en',
    CFBundleExecutable: 'applet',
    CFBundleIconFile: 'applet',
    CFBundleIdentifier: APP_BUNDLE_ID,
    CFBundleInfoDictionaryVersion: '6.0',
    CFBundleName: 'Device Agent',
    CFBundlePackageType: 'APPL',
    CFBundleSignature: 'aplt',
    CFBundleShortVersionString: VERSION,
    CFBundleVersion: VERSION,
    LSMinimumSystemVersion: '11.0',
    // No Dock icon: the app only shows its dialogs.
    LSUIElement: true,
    CFBundleURLTypes: [{ CFBundleURLName: `${APP_BUNDLE_ID}.enrollment`, CFBundleURLSchemes: [LINK_SCHEME] }],
  });
}

export const darwinLinkHandler: LinkHandlerModule = {
  installSteps(spec) {
    const script = posix.join(spec.programDir, SCRIPT_NAME);
    return [
      { kind: 'write', path: script, content: linkHandlerScript(spec), mode: 0o644 },
      { kind: 'remove', path: APP_PATH, recursive: true },
      { kind: 'run', argv: ['osacompile', '-o', APP_PATH, script] },
      { kind: 'write', path: `${APP_PATH}/Contents/Info.plist`, content: appInfoPlist(), mode: 0o644 },
      // The Info.plist changed after osacompile signed the bundle: seal it again (ad hoc).
      { kind: 'run', argv: ['codesign', '--force', '--sign', '-', APP_PATH] },
      { kind: 'run', argv: [LSREGISTER, '-f', APP_PATH], mayFail: true },
    ] satisfies PlanStep[];
  },
  uninstallSteps(spec) {
    return [
      { kind: 'run', argv: [LSREGISTER, '-u', APP_PATH], mayFail: true },
      { kind: 'remove', path: APP_PATH, recursive: true },
      { kind: 'remove', path: posix.join(spec.programDir, SCRIPT_NAME) },
    ];
  },
};
