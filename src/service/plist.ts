// Writes Apple XML property lists (launchd jobs, app bundle Info.plist). Only the value types
// those files use: strings, booleans, integers, arrays and dictionaries.
export type PlistNode = string | boolean | number | readonly PlistNode[] | { readonly [key: string]: PlistNode };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// Array.isArray narrows to any[], not to readonly PlistNode[].
function isList(value: PlistNode): value is readonly PlistNode[] {
  return Array.isArray(value);
}

function render(value: PlistNode, indent: string): string[] {
  if (typeof value === 'string') return [`${indent}<string>${escapeXml(value)}</string>`];
  if (typeof value === 'boolean') return [`${indent}<${value}/>`];
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new TypeError(`plist integers only: ${value}`);
    return [`${indent}<integer>${value}</integer>`];
  }
  const inner = `${indent}\t`;
  if (isList(value)) {
    return [`${indent}<array>`, ...value.flatMap((item) => render(item, inner)), `${indent}</array>`];
  }
  const entries = Object.entries(value);
  return [
    `${indent}<dict>`,
    ...entries.flatMap(([key, item]) => [`${inner}<key>${escapeXml(key)}</key>`, ...render(item, inner)]),
    `${indent}</dict>`,
  ];
}

export function plist(root: { readonly [key: string]: PlistNode }): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    ...render(root, ''),
    '</plist>',
    '',
  ].join('\n');
}
