// The time-daemon readers LINUX and FREEBSD TIME_SYNC share (checks/timeDaemons.ts), on output
// as ntpq, ntpsec, OpenNTPD and chrony print it.
import { describe, expect, it } from 'vitest';
import { chronyTrackingCsv, chronyTrackingText, ntpctlClockSync, ntpqClockSync } from '../../checks/timeDaemons';

describe('ntpq system variables', () => {
  it('reads leap and stratum from a full `rv` (ntpsec) and from `rv 0 leap,stratum,offset`', () => {
    const rv =
      'associd=0 status=0615 leap_none, sync_ntp, 1 event, clock_sync,\nversion="ntpd ntpsec-1.2.2", processor="x86_64",\nsystem="Linux/6.1.0-26-amd64", leap=00, stratum=2, precision=-24, rootdelay=12.4,\noffset=0.834, frequency=-12.1\n';
    expect(ntpqClockSync(rv)).toEqual({ synchronized: true, stratum: 2, offsetSeconds: 0.000834 });
    expect(ntpqClockSync('leap=00, stratum=3, offset=-0.512\n')).toEqual({ synchronized: true, stratum: 3, offsetSeconds: -0.000512 });
  });

  it('takes leap alarm or stratum 16 for "not synchronised", and the status word alone for nothing', () => {
    expect(
      ntpqClockSync('associd=0 status=c016 leap_alarm, sync_unspec, 1 event, restart,\nleap=11, stratum=16, offset=0.000\n'),
    ).toMatchObject({ synchronized: false });
    expect(ntpqClockSync('leap=00, stratum=16\n')).toMatchObject({ synchronized: false });
    expect(ntpqClockSync('associd=0 status=0615 leap_none, sync_ntp, 1 event, clock_sync,\n')).toBeUndefined();
  });
});

describe('ntpctl -s status', () => {
  it('never mistakes "unsynced" for "synced"', () => {
    expect(ntpctlClockSync('4/4 peers valid, clock synced, stratum 2\n')).toEqual({ synchronized: true, stratum: 2 });
    expect(ntpctlClockSync('0/1 peers valid, clock unsynced\n')).toEqual({ synchronized: false });
    expect(ntpctlClockSync('1/1 sensors valid, clock unsynced, clock offset is 12.345ms\n')).toEqual({ synchronized: false });
    expect(ntpctlClockSync('no peers and no sensors configured\n')).toBeUndefined();
  });
});

describe('chronyc tracking', () => {
  it('reads the text report: leap status, stratum, signed offset', () => {
    const text =
      'Reference ID    : 83E17991 (chablis.fnal.gov)\nStratum         : 3\nSystem time     : 2.500000000 seconds slow of NTP time\nLeap status     : Normal\n';
    expect(chronyTrackingText(text)).toEqual({ synchronized: true, stratum: 3, offsetSeconds: -2.5 });
    expect(chronyTrackingText('Stratum         : 0\nLeap status     : Not synchronised\n')).toMatchObject({ synchronized: false });
    expect(chronyTrackingText('Leap status     : Maybe\n')).toBeUndefined();
    expect(chronyTrackingText('506 Cannot talk to daemon\n')).toBeUndefined();
  });

  it('reads the CSV report by its 14 fields', () => {
    expect(
      chronyTrackingCsv(
        '50505300,PPS,1,1776153600.123456,0.000000015,0.000000021,0.000000034,-1.234,0.001,0.015,0.000000000,0.000015000,16.0,Normal\n',
      ),
    ).toEqual({ synchronized: true, stratum: 1, offsetSeconds: 1.5e-8 });
    expect(
      chronyTrackingCsv(
        '00000000,,0,0.000000000,0.000000000,0.000000000,0.000000000,0.000,0.000,0.000,0.000000000,0.000000000,0.0,Not synchronised\n',
      ),
    ).toMatchObject({ synchronized: false });
    expect(chronyTrackingCsv('A,B,3,Normal\n')).toBeUndefined();
  });
});
