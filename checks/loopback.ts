// Whether a listening address is reachable from this machine only, for every platform's
// REMOTE_LOGIN (a listener bound only to loopback is not exposure): 127.0.0.0/8, ::1, their
// IPv4-mapped forms, and a link-local address scoped to a loopback interface (fe80::1%lo0).
export function isLoopbackAddress(address: string): boolean {
  const a = address.trim().toLowerCase();
  return /^(?:::ffff:)?127\./.test(a) || a === '::1' || /%lo\d*$/.test(a);
}
