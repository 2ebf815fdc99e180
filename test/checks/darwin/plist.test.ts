import { describe, expect, it } from 'vitest';
import { parsePlist, plistBool, plistDict, plistInt, plistString, type PlistValue } from '../../../checks/darwin/plist';
import { stringMatching } from '../../support/matchers';

const HEADER = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
`;
const doc = (body: string) => `${HEADER}<plist version="1.0">\n${body}\n</plist>\n`;

function value(xml: string): PlistValue {
  const result = parsePlist(xml);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

describe('parsePlist', () => {
  it('reads every element type of the plist DTD', () => {
    const parsed = value(
      doc(`<dict>
	<key>name</key><string>Tom &amp; Jerry &lt;3 &#x41;&#66;</string>
	<key>count</key><integer>-42</integer>
	<key>ratio</key><real>0.5</real>
	<key>exp</key><real>1e3</real>
	<key>on</key><true/>
	<key>off</key><false/>
	<key>when</key><date>2026-09-18T21:53:58Z</date>
	<key>blob</key><data>
	aGVs
	bG8=
	</data>
	<key>list</key><array><string>a</string><integer>1</integer><array/></array>
	<key>empty</key><dict/>
	<key>blank</key><string/>
	<key>cdata</key><string><![CDATA[a < b]]></string>
</dict>`),
    );
    expect(parsed).toEqual({
      name: 'Tom & Jerry <3 AB',
      count: -42,
      ratio: 0.5,
      exp: 1000,
      on: true,
      off: false,
      when: new Date('2026-09-18T21:53:58Z'),
      blob: new Uint8Array(Buffer.from('hello')),
      list: ['a', 1, []],
      empty: {},
      blank: '',
      cdata: 'a < b',
    });
  });

  it('reads the real pwpolicy plist (after its banner), comments and a root array', () => {
    const parsed = plistDict(
      value(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<!-- a comment -->
	<key>policyCategoryPasswordContent</key>
	<array>
		<dict>
			<key>policyContent</key>
			<string>policyAttributePassword matches '.{4,}+'</string>
			<key>policyIdentifier</key>
			<string>com.apple.defaultpasswordpolicy.fde</string>
		</dict>
	</array>
</dict>
</plist>`),
    );
    expect(parsed?.policyCategoryPasswordContent).toEqual([
      { policyContent: "policyAttributePassword matches '.{4,}+'", policyIdentifier: 'com.apple.defaultpasswordpolicy.fde' },
    ]);
    expect(value(doc('<array><true/></array>'))).toEqual([true]);
  });

  it('keeps "__proto__" as an ordinary key', () => {
    const parsed = plistDict(value(doc('<dict><key>__proto__</key><string>x</string></dict>')));
    expect(parsed?.['__proto__']).toBe('x');
    expect(Object.getPrototypeOf(parsed)).toBeNull();
  });

  it.each([
    ['no plist root', `${HEADER}<dict/>`],
    ['truncated', doc('<dict><key>x</key>').slice(0, -10)],
    ['unknown element', doc('<dict><key>x</key><float>1</float></dict>')],
    ['value without key', doc('<dict><string>x</string></dict>')],
    ['bad integer', doc('<integer>12a</integer>')],
    ['bad real', doc('<real>1.2.3</real>')],
    ['bad date', doc('<date>yesterday</date>')],
    ['bad base64', doc('<data>!!!</data>')],
    ['unknown entity', doc('<string>&nbsp;</string>')],
    ['bare ampersand', doc('<string>a & b</string>')],
    ['mismatched close', doc('<array></dict>')],
    ['text after the root', `${doc('<true/>')}trailing`],
    ['two root values', doc('<true/><false/>')],
    ['empty input', ''],
    ['not xml at all', 'There are no account policies for all users.'],
  ])('rejects %s', (_name, xml) => {
    const result = parsePlist(xml);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/at offset \d+$/);
  });

  it('refuses absurd nesting instead of overflowing the stack', () => {
    const deep = '<array>'.repeat(100) + '</array>'.repeat(100);
    expect(parsePlist(doc(deep))).toEqual({ ok: false, error: stringMatching(/nesting too deep/) });
  });
});

describe('typed accessors', () => {
  it('plistBool takes booleans and the integers 0/1 only', () => {
    expect(plistBool(true)).toBe(true);
    expect(plistBool(0)).toBe(false);
    expect(plistBool(1)).toBe(true);
    expect(plistBool(2)).toBeUndefined();
    expect(plistBool('1')).toBeUndefined();
    expect(plistBool(undefined)).toBeUndefined();
  });

  it('plistInt, plistString and plistDict check the type', () => {
    expect(plistInt(600)).toBe(600);
    expect(plistInt(1.5)).toBeUndefined();
    expect(plistInt('600')).toBeUndefined();
    expect(plistString('x')).toBe('x');
    expect(plistString(1)).toBeUndefined();
    expect(plistDict([])).toBeUndefined();
    expect(plistDict(new Date(0))).toBeUndefined();
    expect(plistDict({ a: 1 })).toEqual({ a: 1 });
  });
});
