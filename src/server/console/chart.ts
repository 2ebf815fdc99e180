// The overview's compliance chart: one bar per day, its height the share of PASS among the day's
// PASS, FAIL and UNKNOWN results, as inline SVG (presentation attributes only: the CSP allows no
// inline style). Days without reports are left empty.
import type { ComplianceDay } from '../admin';
import { html, type Html } from './html';

const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 36;
const BOTTOM = 22;

export function complianceChart(days: readonly ComplianceDay[]): Html {
  const plotHeight = HEIGHT - BOTTOM - 8;
  const step = (WIDTH - LEFT) / Math.max(1, days.length);
  const y = (ratio: number) => 8 + plotHeight * (1 - ratio);
  const bars = days.map((day, i) => {
    const x = LEFT + i * step + 1;
    const label = day.pass_ratio === null ? `${day.day}: no reports` : `${day.day}: ${Math.round(day.pass_ratio * 100)}% passing`;
    if (day.pass_ratio === null)
      return html`<rect x="${x}" y="${y(0) - 1}" width="${step - 2}" height="1" fill="#ccc"><title>${label}</title></rect>`;
    const top = y(day.pass_ratio);
    return html`<rect
      x="${x.toFixed(1)}"
      y="${top.toFixed(1)}"
      width="${(step - 2).toFixed(1)}"
      height="${(y(0) - top).toFixed(1)}"
      fill="${day.pass_ratio >= 0.9 ? '#2e7d32' : day.pass_ratio >= 0.6 ? '#f9a825' : '#c62828'}"
      ><title>${label}</title></rect
    >`;
  });
  const grid = [0, 0.5, 1].map(
    (ratio) =>
      html`<line x1="${LEFT}" x2="${WIDTH}" y1="${y(ratio)}" y2="${y(ratio)}" stroke="#ddd" /><text
          x="${LEFT - 4}"
          y="${y(ratio) + 4}"
          text-anchor="end"
          font-size="11"
          fill="#555"
          >${ratio * 100}%</text
        >`,
  );
  const first = days[0]?.day ?? '';
  const last = days.at(-1)?.day ?? '';
  return html`<figure class="chart">
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      width="${WIDTH}"
      height="${HEIGHT}"
      role="img"
      aria-label="Share of passing results per day, ${first} to ${last}"
    >
      ${grid}${bars}
      <text x="${LEFT}" y="${HEIGHT - 6}" font-size="11" fill="#555">${first}</text>
      <text x="${WIDTH}" y="${HEIGHT - 6}" font-size="11" fill="#555" text-anchor="end">${last}</text>
    </svg>
    <figcaption>
      Share of PASS among PASS, FAIL and UNKNOWN results, per day (UTC); each device's last result of each check that day.
    </figcaption>
  </figure>`;
}
