// A throwaway certificate authority and a server certificate for 127.0.0.1/localhost, made for one
// test run: the agent must trust it only when given --ca-file. Made here with node:crypto (P-256
// keys, ECDSA-SHA256 signatures, the few DER structures of RFC 5280 two certificates need) rather
// than with the openssl program, which a machine with only Node may lack.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/agent';

/** A name only the test proxy resolves (to 127.0.0.1): a server that is not loopback to the agent. */
export const PROXIED_HOST = 'agents.device-agent.test';

export interface ThrowawayCa {
  /** PEM file of the CA certificate (what --ca-file gets). */
  caFile: string;
  /** PEM of the server's certificate and key. */
  cert: string;
  key: string;
}

/** One DER element (X.690): tag, definite length, content. */
function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const length: number[] = [];
  for (let n = body.length; n > 0; n >>= 8) length.unshift(n & 0xff);
  const header = body.length < 0x80 ? [tag, body.length] : [tag, 0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from(header), body]);
}

const sequence = (...items: Buffer[]) => der(0x30, ...items);

function objectId(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let n = arc >> 7; n > 0; n >>= 7) base128.unshift((n & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

const commonName = (name: string) => sequence(der(0x31, sequence(objectId('2.5.4.3'), der(0x0c, Buffer.from(name, 'utf8')))));
/** UTCTime, YYMMDDHHMMSSZ. */
const utcTime = (at: Date) =>
  der(0x17, Buffer.from(at.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1$2$3$4$5$6Z')));
const extension = (id: string, critical: boolean, value: Buffer) =>
  sequence(objectId(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), der(0x04, value));
/** RFC 5280's key identifier: SHA-1 of the public key's bits (the uncompressed point). */
function keyId(publicKey: KeyObject): Buffer {
  const { x, y } = publicKey.export({ format: 'jwk' });
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from([4]), Buffer.from(x!, 'base64url'), Buffer.from(y!, 'base64url')]))
    .digest();
}
// Subject and authority key identifiers: what openssl adds, and what a strict verifier (openssl verify -x509_strict) asks for.
const keyIdentifiers = (subject: KeyObject, issuer: KeyObject) => [
  extension('2.5.29.14', false, der(0x04, keyId(subject))),
  extension('2.5.29.35', false, sequence(der(0x80, keyId(issuer)))),
];
const ECDSA_WITH_SHA256 = sequence(objectId('1.2.840.10045.4.3.2'));
const DAY_MS = 86_400_000;

/** An X.509 v3 certificate, valid for two days, as PEM. */
function certificate(subject: string, issuer: string, publicKey: KeyObject, signer: KeyObject, extensions: Buffer[]): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x3f) | 0x40; // positive, and no leading zero byte: DER's shortest form
  const now = Date.now();
  const toBeSigned = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, serial),
    ECDSA_WITH_SHA256,
    commonName(issuer),
    sequence(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 2 * DAY_MS))),
    commonName(subject),
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(...extensions)),
  );
  // node:crypto signs EC keys in DER (ECDSA-Sig-Value), as X.509 wants; the BIT STRING has no unused bits.
  const signed = sequence(toBeSigned, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0]), sign('sha256', toBeSigned, signer)));
  return `-----BEGIN CERTIFICATE-----\n${signed
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
}

export function makeThrowawayCa(): ThrowawayCa {
  const authority = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const server = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caName = 'device-agent test CA';
  const ca = certificate(caName, caName, authority.publicKey, authority.privateKey, [
    extension('2.5.29.19', true, sequence(der(0x01, Buffer.from([0xff])))), // basicConstraints: CA
    extension('2.5.29.15', true, der(0x03, Buffer.from([0x02, 0x04]))), // keyUsage: keyCertSign
    ...keyIdentifiers(authority.publicKey, authority.publicKey),
  ]);
  const cert = certificate('127.0.0.1', caName, server.publicKey, authority.privateKey, [
    // subjectAltName: IP 127.0.0.1, DNS localhost and the proxied name.
    extension(
      '2.5.29.17',
      false,
      sequence(der(0x87, Buffer.from([127, 0, 0, 1])), der(0x82, Buffer.from('localhost')), der(0x82, Buffer.from(PROXIED_HOST))),
    ),
    extension('2.5.29.37', false, sequence(objectId('1.3.6.1.5.5.7.3.1'))), // extendedKeyUsage: serverAuth
    ...keyIdentifiers(server.publicKey, authority.publicKey),
  ]);
  const caFile = join(tempDir('device-agent-ca-'), 'ca.pem');
  writeFileSync(caFile, ca);
  return { caFile, cert, key: server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
