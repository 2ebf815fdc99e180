// The small OS seams of "My device": each platform's browser opener (the URL one argument, never
// through a shell), and who is at the screen according to logind's seat file (/run/systemd/seats/seat0,
// in the format systemd's seat_save() in src/login/logind-seat.c writes it; sd_seat_get_active reads it;
// a real logind writing it: test/agent/logindSeat.test.ts).
import { describe, expect, test } from 'vitest';
import { openerFor } from '../../src/platform/browser';
import { activeUid, localEndpointDir } from '../../src/platform/localEndpoint';

const URL_ = 'https://agents.example.com/my-device?code=abc_DEF-123';

describe('the browser opener', () => {
  test('xdg-open, open, rundll32: the URL is one argument', () => {
    expect(openerFor('LINUX', URL_)).toEqual({ file: '/usr/bin/xdg-open', args: [URL_] });
    expect(openerFor('FREEBSD', URL_)).toEqual({ file: '/usr/local/bin/xdg-open', args: [URL_] });
    expect(openerFor('DARWIN', URL_)).toEqual({ file: '/usr/bin/open', args: [URL_] });
    expect(openerFor('WINDOWS', URL_, { SystemRoot: 'D:\\Win' })).toEqual({
      file: 'D:\\Win/System32/rundll32.exe'.replace(/\//g, process.platform === 'win32' ? '\\' : '/'),
      args: ['url.dll,FileProtocolHandler', URL_],
    });
  });
});

describe('the console user', () => {
  test("logind's seat file: ACTIVE_UID names the user of the active session; none without it", () => {
    const seat =
      '# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\nCAN_TTY=1\nCAN_GRAPHICAL=1\nACTIVE=2\nACTIVE_UID=1000\nSESSIONS=2 c1\n';
    expect(activeUid(seat)).toBe(1000);
    expect(activeUid('IS_SEAT0=1\nCAN_MULTI_SESSION=1\nCAN_TTY=1\nCAN_GRAPHICAL=1\n')).toBeNull();
    expect(activeUid('ACTIVE_UID=\n')).toBeNull();
  });

  test('the runtime directory: per platform, DEVICE_AGENT_RUNTIME_DIR first, none on Windows', () => {
    expect(localEndpointDir({}, 'linux')).toBe('/run/device-agent');
    expect(localEndpointDir({}, 'darwin')).toBe('/var/run/device-agent');
    expect(localEndpointDir({}, 'freebsd')).toBe('/var/run/device-agent');
    expect(localEndpointDir({}, 'win32')).toBeNull();
    expect(localEndpointDir({ DEVICE_AGENT_RUNTIME_DIR: '/tmp/x/../run' }, 'linux')).toBe('/tmp/run');
  });
});
