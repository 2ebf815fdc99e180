// macOS and Windows notifications cannot run here (no osascript, no Windows PowerShell): what is
// tested is what the daemon hands the OS. The exact commands and arguments; the user-session
// targeting (launchctl asuser + sudo to the console uid; a scheduled task with the Interactive logon
// type for the console user); and that device text, however hostile, is data and never code: after
// osascript's script as separate arguments, inside PowerShell only as base64 of JSON, put in the
// toast's XML by CreateTextNode. What stays untested: that macOS and Windows show them (docs/agent.md).
import { describe, expect, test } from 'vitest';
import type { PostureNotification } from '../../src/agent/notifications';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bannerText,
  DARWIN_DIALOG_SCRIPT,
  DARWIN_NOTIFY_SCRIPT,
  darwinMyDeviceCommand,
  darwinNotifier,
  darwinNotifyCommand,
  OPEN_BUTTON,
} from '../../src/platform/darwinNotify';
import { tempDir, until } from '../support/agent';
import { platformNotifier } from '../../src/platform/notifier';
import { isMyDeviceLink } from '../../src/linkHandler/openLink';
import { MY_DEVICE_LINK } from '../../src/linkHandler/types';
import { LINK_SCHEME } from '../../src/protocol/constants';
import {
  serviceNotifyScript,
  TASK_PATH,
  TOAST_XML,
  toastScript,
  windowsNotifier,
  windowsNotifyCommand,
} from '../../src/platform/windowsNotify';
import { encodedCommand } from '../../src/platform/windowsPowerShell';

/** Text a compromised catalogue or a hostile server could try: quotes, escapes, line breaks, markup, substitutions. */
const HOSTILE = `-e "x" & do shell script "id" & "\n'; Remove-Item C:\\ -Recurse; '$(whoami)\`<toast>&amp;</toast>\u202e`;
const notification: PostureNotification = {
  check_key: 'FIREWALL_ENABLED',
  change: 'failing',
  title: 'FIREWALL_ENABLED fails on this device',
  body: HOSTILE,
};
const recovered: PostureNotification = {
  check_key: 'FIREWALL_ENABLED',
  change: 'recovered',
  title: 'FIREWALL_ENABLED passes again',
  body: 'Thank you: this check passes again.',
};

describe('macOS: osascript in the console user session', () => {
  test('the root service, a check that fails: launchctl asuser <uid>, sudo to that uid, the dialog with the text as arguments after the script', () => {
    const [command, args] = darwinNotifyCommand(notification, 501);
    expect(command).toBe('/bin/launchctl');
    expect(args.slice(0, 6)).toEqual(['asuser', '501', '/usr/bin/sudo', '-n', '-u', '#501']);
    const osascript = args.slice(6);
    expect(osascript).toEqual([
      '/usr/bin/osascript',
      '-e',
      'on run argv',
      '-e',
      'set answer to display dialog (item 3 of argv) with title (item 2 of argv) buttons {"Later", "Open My device"} default button "Open My device" cancel button "Later" with icon caution giving up after 600',
      '-e',
      'return button returned of answer',
      '-e',
      'end run',
      'device-agent',
      'FIREWALL_ENABLED fails on this device',
      bannerText(HOSTILE),
    ]);
    // The script is fixed: nothing of the text is in it.
    expect(osascript.slice(1, 9).filter((a) => a !== '-e')).toEqual([...DARWIN_DIALOG_SCRIPT]);
    expect(OPEN_BUTTON).toBe('Open My device');
  });

  test('a check that passes again: the banner, which has no action', () => {
    const [command, args] = darwinNotifyCommand(recovered, 501);
    expect(command).toBe('/bin/launchctl');
    expect(args.slice(6)).toEqual([
      '/usr/bin/osascript',
      '-e',
      'on run argv',
      '-e',
      'display notification (item 3 of argv) with title (item 2 of argv) subtitle "My device: run device-agent my-device"',
      '-e',
      'end run',
      'device-agent',
      'FIREWALL_ENABLED passes again',
      'Thank you: this check passes again.',
    ]);
    expect(args.slice(7, 13).filter((a) => a !== '-e')).toEqual([...DARWIN_NOTIFY_SCRIPT]);
  });

  test("a user's own agent runs osascript itself; my-device: as the console user in their session, or itself", () => {
    const [command, args] = darwinNotifyCommand(notification, null);
    expect(command).toBe('/usr/bin/osascript');
    expect(args[0]).toBe('-e');
    expect(args.at(-3)).toBe('device-agent');
    expect(darwinMyDeviceCommand(['/usr/local/bin/device-agent'], 501)).toEqual([
      '/bin/launchctl',
      ['asuser', '501', '/usr/bin/sudo', '-n', '-u', '#501', '/usr/local/bin/device-agent', 'my-device'],
    ]);
    expect(darwinMyDeviceCommand(['/usr/local/bin/node', '/opt/da/device-agent.cjs'], null)).toEqual([
      '/usr/local/bin/node',
      ['/opt/da/device-agent.cjs', 'my-device'],
    ]);
  });

  test('banner text: one line without control characters, at most 240 characters', () => {
    expect(bannerText(HOSTILE)).toBe(HOSTILE.replace('\n', ' ').replace('\u202e', '').trim());
    expect(bannerText('a\u202eb\u2066c')).toBe('a b c');
    expect(bannerText('a\u0000b\u001b[31mc\r\nd\u2028e')).toBe('a b [31mc d e');
    expect(bannerText(`  ${'x'.repeat(300)} `)).toBe(`${'x'.repeat(239)}…`);
    expect(bannerText('x'.repeat(240))).toBe('x'.repeat(240));
  });
});

/** The text of a PowerShell -EncodedCommand. */
const decoded = (base64: string) => Buffer.from(base64, 'base64').toString('utf16le');

describe('Windows: a toast in the console user session', () => {
  test('the service: Windows PowerShell by its path, the script as -EncodedCommand', () => {
    const [command, args] = windowsNotifyCommand(notification, true, { SystemRoot: 'D:\\Win' });
    expect(command).toBe('D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(args.slice(0, -1)).toEqual(['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    expect(decoded(args.at(-1)!)).toBe(serviceNotifyScript(notification));
    expect(windowsNotifyCommand(notification, true, {})[0]).toBe('C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
  });

  test('the service targets the console user: a one-off task, Interactive logon, not elevated, removed afterwards', () => {
    const script = serviceNotifyScript(notification);
    const lines = script.split('\n');
    expect(lines).toContain('$user = (Get-CimInstance -ClassName Win32_ComputerSystem).UserName');
    expect(lines).toContain("if (-not $user) { 'nobody'; exit 0 }");
    expect(lines).toContain('$principal = New-ScheduledTaskPrincipal -UserId $user -LogonType Interactive -RunLevel Limited');
    expect(lines).toContain(
      `Register-ScheduledTask -TaskName $name -TaskPath '${TASK_PATH}' -Action $action -Principal $principal -Force | Out-Null`,
    );
    expect(script).toMatch(
      /try \{\n {2}Start-ScheduledTask .*\n {2}'started'\n {2}Start-Sleep -Seconds 60\n\} finally \{\n {2}Unregister-ScheduledTask /,
    );
    // The task runs the toast script, hidden, as -EncodedCommand inside a single-quoted argument.
    const argument = /-Argument '([^']*)'$/m.exec(script)![1]!;
    const [flags, encoded] = [argument.split(' ').slice(0, -1), argument.split(' ').at(-1)!];
    expect(flags).toEqual(['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-WindowStyle', 'Hidden', '-EncodedCommand']);
    expect(decoded(encoded)).toBe(toastScript(notification));
  });

  test('the text is data: base64 of its JSON in the toast script, into the XML by CreateTextNode, in neither script as code', () => {
    const toast = toastScript(notification);
    const data = /FromBase64String\('([A-Za-z0-9+/=]+)'\)/.exec(toast)![1]!;
    expect(JSON.parse(Buffer.from(data, 'base64').toString('utf8'))).toEqual({ title: notification.title, body: HOSTILE });
    for (const script of [toast, serviceNotifyScript(notification)]) {
      for (const piece of ['do shell script', 'Remove-Item', '$(whoami)', '<toast>&amp;', '\u202e']) expect(script).not.toContain(piece);
    }
    expect(toast).toContain('$texts.Item(0).AppendChild($xml.CreateTextNode($n.title)) | Out-Null');
    expect(toast).toContain('$texts.Item(1).AppendChild($xml.CreateTextNode($n.body)) | Out-Null');
    expect(toast).toContain("CreateToastNotifier('{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe')");
    expect(encodedCommand('é$')).toBe(Buffer.from('é$', 'utf16le').toString('base64'));
  });

  test('the two scripts, line by line (what Windows PowerShell runs)', () => {
    const plain: PostureNotification = { check_key: 'SCREEN_LOCK', change: 'failing', title: 'T', body: 'B' };
    const data = Buffer.from('{"title":"T","body":"B"}').toString('base64');
    const toast = [
      "$ErrorActionPreference = 'Stop'",
      `$n = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String('${data}')) | ConvertFrom-Json`,
      '[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null',
      '[Windows.Data.Xml.Dom.XmlDocument, Windows.Data.Xml.Dom.XmlDocument, ContentType = WindowsRuntime] | Out-Null',
      '$xml = New-Object Windows.Data.Xml.Dom.XmlDocument',
      `$xml.LoadXml('<toast activationType="protocol" launch="device-agent://my-device"><visual><binding template="ToastGeneric"><text/><text/></binding></visual><actions><action content="Open My device" activationType="protocol" arguments="device-agent://my-device"/></actions></toast>')`,
      "$texts = $xml.GetElementsByTagName('text')",
      '$texts.Item(0).AppendChild($xml.CreateTextNode($n.title)) | Out-Null',
      '$texts.Item(1).AppendChild($xml.CreateTextNode($n.body)) | Out-Null',
      "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe').Show([Windows.UI.Notifications.ToastNotification]::new($xml))",
    ].join('\n');
    expect(toastScript(plain)).toBe(toast);
    const argument = `-NoProfile -NonInteractive -ExecutionPolicy Bypass -WindowStyle Hidden -EncodedCommand ${encodedCommand(toast)}`;
    expect(serviceNotifyScript(plain)).toBe(
      [
        "$ErrorActionPreference = 'Stop'",
        '$user = (Get-CimInstance -ClassName Win32_ComputerSystem).UserName',
        "if (-not $user) { 'nobody'; exit 0 }",
        "$name = 'notify-' + [guid]::NewGuid()",
        `$action = New-ScheduledTaskAction -Execute "$env:SystemRoot\\System32\\WindowsPowerShell\\v1.0\\powershell.exe" -Argument '${argument}'`,
        '$principal = New-ScheduledTaskPrincipal -UserId $user -LogonType Interactive -RunLevel Limited',
        "Register-ScheduledTask -TaskName $name -TaskPath '\\device-agent\\' -Action $action -Principal $principal -Force | Out-Null",
        'try {',
        "  Start-ScheduledTask -TaskName $name -TaskPath '\\device-agent\\'",
        "  'started'",
        '  Start-Sleep -Seconds 60',
        '} finally {',
        "  Unregister-ScheduledTask -TaskName $name -TaskPath '\\device-agent\\' -Confirm:$false",
        '}',
      ].join('\n'),
    );
  });

  test("the toast's button and a click open My device: the link handler's device-agent://my-device, no URL of the page", () => {
    expect(MY_DEVICE_LINK).toBe(`${LINK_SCHEME}://my-device`);
    expect(isMyDeviceLink(MY_DEVICE_LINK)).toBe(true);
    // The toast's XML is fixed: the texts enter it by CreateTextNode; the link twice, nothing else of ours.
    expect(TOAST_XML.match(/activationType="protocol"/g)).toHaveLength(2);
    expect(TOAST_XML).toContain(`launch="${MY_DEVICE_LINK}"`);
    expect(TOAST_XML).toContain(`<action content="Open My device" activationType="protocol" arguments="${MY_DEVICE_LINK}"/>`);
    expect(TOAST_XML).not.toMatch(/'|https?:/);
    expect(toastScript(notification)).toContain(`$xml.LoadXml('${TOAST_XML}')`);
  });

  test('open-link takes device-agent://my-device for my-device, and nothing like it', () => {
    for (const link of ['device-agent://my-device', 'device-agent://my-device/', ' DEVICE-AGENT://My-Device\n'])
      expect(isMyDeviceLink(link), link).toBe(true);
    for (const link of [
      'device-agent://my-device?x=1',
      'device-agent://my-device/x',
      'device-agent://enroll?server=a&token=b',
      'https://my-device',
      'device-agent:my-device',
    ])
      expect(isMyDeviceLink(link), link).toBe(false);
  });

  test("a user's own agent shows the toast itself, without a task", () => {
    const [, args] = windowsNotifyCommand(notification, false, {});
    expect(decoded(args.at(-1)!)).toBe(toastScript(notification));
  });
});

/** A stand-in for osascript or Windows PowerShell (neither runs here): a shell script of the test's. */
const shell = (script: string): [string, string[]] => ['/bin/sh', ['-c', script]];

describe("the notifiers' control flow, with a shell script standing in for osascript and PowerShell", () => {
  test('macOS, a banner (a check passes again): nobody at the screen: nothing run; the console user: their command; a failure rejects', async () => {
    const asked: (number | null)[] = [];
    const runs = (script: string) => (n: PostureNotification, uid: number | null) => {
      asked.push(uid);
      expect(n).toBe(recovered);
      return shell(script);
    };
    const program = ['/usr/local/bin/device-agent'];
    expect(await darwinNotifier(() => Promise.resolve(null), true, program, runs('exit 0'))(recovered)).toBe(false);
    expect(asked).toEqual([]);
    expect(await darwinNotifier(() => Promise.resolve(501), true, program, runs('exit 0'))(recovered)).toBe(true);
    // A user's own agent: no console user asked, osascript itself.
    const noConsole = () => Promise.reject(new Error('not asked'));
    expect(await darwinNotifier(noConsole, false, program, runs('test "$PATH" = /usr/bin:/bin'))(recovered)).toBe(true);
    expect(asked).toEqual([501, null]);
    await expect(darwinNotifier(() => Promise.resolve(501), true, program, runs('exit 3'))(recovered)).rejects.toThrow(
      'osascript exited with 3',
    );
    // No such program (an osascript removed): the spawn error, not a hang.
    const missing = (): [string, string[]] => ['/nonexistent/osascript', []];
    await expect(darwinNotifier(() => Promise.resolve(501), true, program, missing)(recovered)).rejects.toThrow(/ENOENT/);
    await expect(darwinNotifier(() => Promise.resolve(501), true, program, missing)(notification)).rejects.toThrow(/ENOENT/);
    await expect(windowsNotifier(true, () => ['/nonexistent/powershell.exe', []])(notification)).rejects.toThrow(/ENOENT/);
    await expect(windowsNotifier(false, () => ['/nonexistent/powershell.exe', []])(notification)).rejects.toThrow(/ENOENT/);
  });

  test('macOS, the dialog (a check fails): shown without waiting for the answer; "Open My device" runs my-device for that user, nothing else does', async () => {
    const dir = tempDir();
    const opened = join(dir, 'opened');
    /** The dialog's stand-in answers after `delay` seconds. */
    const answering =
      (answer: string, code = 0, delay = 0) =>
      () =>
        shell(`sleep ${delay}; printf '%s\\n' '${answer}'; exit ${code}`);
    const asked: Array<number | null> = [];
    const myDeviceOf = (program: readonly string[], uid: number | null): [string, string[]] => {
      expect(program).toEqual(['/usr/local/bin/device-agent']);
      asked.push(uid);
      return shell(`printf '%s' '${uid} ${program.join(' ')} my-device' > '${opened}'`);
    };
    const notifier = (answer: () => [string, string[]]) =>
      darwinNotifier(() => Promise.resolve(501), true, ['/usr/local/bin/device-agent'], answer, myDeviceOf);
    // "Later" (osascript: User canceled, exit 1), given up (no button), another answer: at once, nothing runs;
    // "Open My device" seconds later, and the notifier does not wait for it.
    for (const answer of [answering('', 1), answering(''), answering('Later')]) expect(await notifier(answer)(notification)).toBe(true);
    const started = Date.now();
    expect(await notifier(answering('Open My device', 0, 3))(notification)).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    await until(() => existsSync(opened), Boolean, 30_000, 'my-device run');
    expect(readFileSync(opened, 'utf8')).toBe('501 /usr/local/bin/device-agent my-device');
    expect(asked).toEqual([501]);
  }, 60_000);

  test('Windows, the service: shown once the script says the task started; nobody: false; an end before either rejects', async () => {
    const runs = (script: string) => (n: PostureNotification, privileged: boolean) => {
      expect(privileged).toBe(true);
      return shell(script);
    };
    const started = Date.now();
    // The script goes on (it removes its task a minute later): the notifier does not wait for it.
    expect(await windowsNotifier(true, runs('echo started; exec sleep 2'))(notification)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await windowsNotifier(true, runs('echo nobody'))(notification)).toBe(false);
    await expect(windowsNotifier(true, runs('exit 4'))(notification)).rejects.toThrow(
      'the notification task script ended (4) before starting the task',
    );
    await expect(windowsNotifier(true, runs('echo Register-ScheduledTask: access denied; exit 1'))(notification)).rejects.toThrow(
      'ended (1) before starting',
    );
  });

  test("Windows, a user's own agent: shown when the toast script succeeds; a failure rejects", async () => {
    const runs = (script: string) => (_n: PostureNotification, privileged: boolean) => {
      expect(privileged).toBe(false);
      return shell(script);
    };
    expect(await windowsNotifier(false, runs('exit 0'))(notification)).toBe(true);
    await expect(windowsNotifier(false, runs('exit 2'))(notification)).rejects.toThrow('the toast script exited with 2');
  });
});

test('one notifier per platform; none elsewhere', async () => {
  for (const platform of ['linux', 'freebsd', 'darwin', 'win32'] as const)
    expect(typeof (await platformNotifier(platform, ['device-agent'], false))).toBe('function');
  expect(await platformNotifier('aix', ['device-agent'], false)).toBeUndefined();
});
