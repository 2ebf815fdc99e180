// Desktop notifications on Windows: a toast (Windows.UI.Notifications) shown by Windows PowerShell
// in the session of the user at the console. The service runs as LocalSystem in session 0, where
// nothing reaches a user's desktop, so it registers a one-off scheduled task that runs as the user
// logged on at the console (Win32_ComputerSystem.UserName), with the Interactive logon type, which
// needs no password and runs in that user's session with their normal (not elevated) rights; it
// starts the task and removes it a little later. A service of the user's own shows the toast itself.
//
// What Windows allows this way: a toast with a title, a text and an "Open My device" button,
// attributed to Windows PowerShell (its registered app id: an app id of our own needs a Start-menu
// shortcut carrying it, which wixl cannot write). The button and a click on the toast activate the
// protocol link device-agent://my-device: Windows starts the agent's registered link handler
// (src/linkHandler/windows.ts) as the user who clicked, in their session, and `open-link` takes that
// link for `my-device`, which gets the page's URL from the service's local endpoint. The URL itself is
// never in the toast: it works once and for minutes, and a toast stays in the notification center.
//
// The notification's text is never part of a script's code: it travels as base64 of its JSON, read
// with ConvertFrom-Json, and enters the toast's XML through CreateTextNode, so no quote, bracket or
// backtick in a summary can change what runs or what the XML says. Both scripts go to PowerShell as
// -EncodedCommand (base64 of UTF-16LE), so no command-line quoting applies either.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Notifier, PostureNotification } from '../agent/notifications';
import { MY_DEVICE_LINK } from '../linkHandler/types';
import { encodedCommand, POWERSHELL_FLAGS, powerShellCommand } from './windowsPowerShell';

/** Windows PowerShell's app id: toasts need an app id the Start menu knows. */
const TOAST_APP_ID = '{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe';
/** The toast, without its two texts: the button and a click open My device through the agent's link handler. */
export const TOAST_XML =
  `<toast activationType="protocol" launch="${MY_DEVICE_LINK}"><visual><binding template="ToastGeneric"><text/><text/></binding></visual>` +
  `<actions><action content="Open My device" activationType="protocol" arguments="${MY_DEVICE_LINK}"/></actions></toast>`;
/** Where the one-off tasks live in the Task Scheduler library. */
export const TASK_PATH = '\\device-agent\\';
/** How long the task stays registered after it was started: the toast has been shown by then. */
const TASK_LIFETIME_SECONDS = 60;
/** What the service's helper prints once the task runs, for the daemon waiting on it. */
const STARTED = 'started';
const NOBODY = 'nobody';

/** The script that shows the toast, as the user; the notification is data in it (base64 of its JSON). */
export function toastScript(notification: PostureNotification): string {
  const data = Buffer.from(JSON.stringify({ title: notification.title, body: notification.body }), 'utf8').toString('base64');
  return [
    "$ErrorActionPreference = 'Stop'",
    `$n = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('${data}')) | ConvertFrom-Json`,
    '[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null',
    '[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] | Out-Null',
    '$xml = New-Object Windows.Data.Xml.Dom.XmlDocument',
    `$xml.LoadXml('${TOAST_XML}')`,
    "$texts = $xml.GetElementsByTagName('text')",
    '$texts.Item(0).AppendChild($xml.CreateTextNode($n.title)) | Out-Null',
    '$texts.Item(1).AppendChild($xml.CreateTextNode($n.body)) | Out-Null',
    `[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('${TOAST_APP_ID}').Show([Windows.UI.Notifications.ToastNotification]::new($xml))`,
  ].join('\n');
}

/**
 * The script the service (LocalSystem) runs: the console user's name, a one-off task that runs the
 * toast script as them (Interactive logon: their session, no password, not elevated), started, and
 * removed after TASK_LIFETIME_SECONDS. Prints "nobody" when no one is logged on at the console.
 */
export function serviceNotifyScript(notification: PostureNotification): string {
  const toast = [...POWERSHELL_FLAGS, '-WindowStyle', 'Hidden', '-EncodedCommand', encodedCommand(toastScript(notification))].join(' ');
  return [
    "$ErrorActionPreference = 'Stop'",
    '$user = (Get-CimInstance -ClassName Win32_ComputerSystem).UserName',
    `if (-not $user) { '${NOBODY}'; exit 0 }`,
    "$name = 'notify-' + [guid]::NewGuid()",
    `$action = New-ScheduledTaskAction -Execute "$env:SystemRoot\\System32\\WindowsPowerShell\\v1.0\\powershell.exe" -Argument '${toast}'`,
    '$principal = New-ScheduledTaskPrincipal -UserId $user -LogonType Interactive -RunLevel Limited',
    `Register-ScheduledTask -TaskName $name -TaskPath '${TASK_PATH}' -Action $action -Principal $principal -Force | Out-Null`,
    'try {',
    `  Start-ScheduledTask -TaskName $name -TaskPath '${TASK_PATH}'`,
    `  '${STARTED}'`,
    `  Start-Sleep -Seconds ${TASK_LIFETIME_SECONDS}`,
    '} finally {',
    `  Unregister-ScheduledTask -TaskName $name -TaskPath '${TASK_PATH}' -Confirm:$false`,
    '}',
  ].join('\n');
}

/** The command that shows `notification`: the service's task for the console user, or the toast itself for a user's own agent. */
export function windowsNotifyCommand(notification: PostureNotification, privileged: boolean, env = process.env): [string, string[]] {
  return powerShellCommand(privileged ? serviceNotifyScript(notification) : toastScript(notification), env);
}

/**
 * The daemon's notifier on Windows: shown once the task runs in the user's session (the service) or
 * the toast was shown (a user's own agent); false when nobody is logged on at the console.
 * `commandOf` is windowsNotifyCommand but in tests, which cannot run Windows PowerShell.
 */
export function windowsNotifier(privileged: boolean, commandOf: typeof windowsNotifyCommand = windowsNotifyCommand): Notifier {
  return (notification) => {
    const [command, args] = commandOf(notification, privileged);
    return new Promise<boolean>((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true, detached: privileged });
      child.once('error', reject);
      if (!privileged) {
        child.once('exit', (code) => (code === 0 ? resolve(true) : reject(new Error(`the toast script exited with ${code}`))));
        return;
      }
      // After the first line the promise is settled: a later end changes nothing.
      child.once('close', (code) => reject(new Error(`the notification task script ended (${code}) before starting the task`)));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      void lines.next().then((first) => {
        const line = first.done ? '' : first.value.trim();
        if (line !== STARTED && line !== NOBODY) return;
        resolve(line === STARTED);
        // The script removes its task by itself a minute later.
        child.stdout.destroy();
        child.unref();
      });
    });
  };
}
