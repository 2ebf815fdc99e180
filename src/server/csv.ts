// CSV exports for an auditor's spreadsheet (RFC 4180, UTF-8). Devices report much of the text in
// them, so a cell a spreadsheet would evaluate as a formula (first character =, +, -, @, tab or
// carriage return: OWASP's "CSV injection") is prefixed with an apostrophe, which spreadsheets
// show as text. A cell holding a quote, a comma or a line break is quoted, its quotes doubled.
// The export says what it holds in `#` lines before the table: organization, filters, time.

export type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export interface CsvExport {
  /** What the export holds, as `# name: value` lines (organization, filters, exported at). */
  about: readonly (readonly [string, string])[];
  columns: readonly string[];
  rows: readonly (readonly CsvValue[])[];
}

export function csvDocument({ about, columns, rows }: CsvExport): string {
  const line = (cells: readonly CsvValue[]) => `${cells.map(csvCell).join(',')}\r\n`;
  // An about line is one cell, so that a line break or a formula in a filter's value stays inert.
  const preamble = about.map(([name, value]) => `${csvCell(`# ${name}: ${value}`)}\r\n`).join('');
  return preamble + line(columns) + rows.map(line).join('');
}

/** A file name for the download: the export's subject and day, nothing a device reported. */
export function csvFileName(subject: string, at: Date): string {
  return `${subject.replace(/[^A-Za-z0-9_-]+/g, '_')}-${at.toISOString().slice(0, 10)}.csv`;
}
