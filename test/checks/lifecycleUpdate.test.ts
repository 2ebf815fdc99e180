// scripts/lifecycle-update.ts: reads the data set's product files as they are written, and refuses
// (writing nothing) a checkout with an OS product or a field it does not know.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTables, parseProduct } from '../../scripts/lifecycle-update';
import { linuxLifecycle } from '../../checks/linux/lifecycle';
import { windowsLifecycle } from '../../checks/windows/lifecycle';

// The first 60 lines of endoflife-date/endoflife.date products/debian.md @ a70eca3 (MIT).
const debianHead = readFileSync(new URL('../fixtures/endoflife-date/debian.md.head', import.meta.url), 'utf8');

describe('parseProduct', () => {
  it("reads a product file's category and releases (codename, dates, extension)", () => {
    const { fields, releases } = parseProduct(`${debianHead}\n---\n`, 'products/debian.md');
    expect(fields).toMatchObject({ category: 'os', title: 'Debian' });
    expect(releases[0]).toEqual({
      releaseCycle: '13',
      codename: 'Trixie',
      releaseDate: '2025-08-09',
      eol: '2028-08-09',
      eoes: '2030-06-30',
      latest: '13.6',
      latestReleaseDate: '2026-07-11',
    });
    expect(releases.map((r) => r.releaseCycle)).toEqual(['13', '12', '11', '10']);
  });

  it('refuses what it cannot read instead of guessing', () => {
    expect(() => parseProduct('no front matter', 'products/x.md')).toThrow('products/x.md: no front matter');
    expect(() => parseProduct('---\nreleases:\n  - releaseCycle: "1"\n    eol: soon\n---\n', 'products/x.md')).toThrow(
      'eol "soon" is neither a date nor true/false',
    );
    expect(() => parseProduct('---\nreleases:\n    eol: 2020-01-01\n---\n', 'products/x.md')).toThrow(
      'release field before the first release',
    );
  });
});

describe('buildTables', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    delete process.env.DATASET_COMMIT;
    delete process.env.DATASET_DATE;
  });
  const checkout = (files: Record<string, string>) => {
    dir = mkdtempSync(path.join(tmpdir(), 'eol-'));
    mkdirSync(path.join(dir, 'products'));
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, 'products', name), text);
    process.env.DATASET_COMMIT = 'a'.repeat(40);
    process.env.DATASET_DATE = '2026-08-22';
    return dir;
  };

  it('fails on an OS product it does not map, naming it', () => {
    const os = '---\ntitle: New OS\ncategory: os\nreleases:\n  - releaseCycle: "1"\n    eol: false\n---\n';
    expect(() => buildTables(checkout({ 'new-os.md': os }))).toThrow('products/new-os.md: an OS product this script does not map');
  });

  it('fails when a product it maps is gone from the checkout', () => {
    expect(() => buildTables(checkout({ 'python.md': '---\ncategory: lang\nreleases:\n---\n' }))).toThrow(
      'products this script maps are not OS products of the checkout: almalinux',
    );
  });

  it("maps RHCOS from OpenShift's product (category server-app), without OpenShift's z-stream as `latest`", () => {
    const openshift =
      '---\ntitle: Red Hat OpenShift\ncategory: server-app\nreleases:\n  - releaseCycle: "4.3"\n    releaseDate: 2020-02-12\n    eoas: 2020-06-05\n    eol: 2020-10-27\n    latest: "4.3.40"\n---\n';
    const other = '---\ntitle: Python\ncategory: lang\nreleases:\n  - releaseCycle: "3.13"\n    eol: 2029-10-31\n---\n';
    // The other mapped products are missing from this checkout: the error lists them, not red-hat-openshift.
    expect(() => buildTables(checkout({ 'red-hat-openshift.md': openshift, 'python.md': other }))).toThrow(
      /maps are not OS products of the checkout: almalinux, (?!.*red-hat-openshift)/,
    );
    expect(linuxLifecycle.sources.rhcos).toEqual(['products/red-hat-openshift.md']);
    expect(linuxLifecycle.products.rhcos).toContainEqual({ cycle: '4.3', eol: '2020-10-27', releaseDate: '2020-02-12' });
  });

  it('fails on a directory that is not the data set', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'eol-'));
    expect(() => buildTables(dir!)).toThrow('has no products/ directory');
  });
});

describe('the generated tables', () => {
  it('keep the data set commit and each product source', () => {
    for (const data of [linuxLifecycle, windowsLifecycle]) {
      expect(data.dataset.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(Object.keys(data.sources).sort()).toEqual(Object.keys(data.products).sort());
    }
    expect(linuxLifecycle.sources.debian).toEqual(['products/debian.md']);
    expect(windowsLifecycle.sources['windows-10-home']).toContain(
      'https://learn.microsoft.com/windows/whats-new/extended-security-updates',
    );
  });
});
