// The console's one stylesheet, served by the server itself (the CSP allows no inline style).
export const STYLESHEET = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2125;background:#f6f7f9}
header{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1.5rem;background:#1f2a37;color:#fff;flex-wrap:wrap}
header a{color:#dfe7f1;text-decoration:none}
header a[aria-current=page]{color:#fff;font-weight:600;border-bottom:2px solid #7cb7ff}
header nav{display:flex;gap:1rem}
.brand{font-weight:700;color:#fff}
.signout{margin-left:auto;display:flex;gap:.6rem;align-items:center;font-size:.9rem}
main{max-width:1180px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.8rem}h3{font-size:1rem;margin:.2rem 0}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{padding:.35rem .6rem;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
th a{color:inherit}
.muted{color:#6b7280}
.status{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.8rem;font-weight:600;background:#e5e7eb}
.status-pass,.status-active{background:#d7f0dc;color:#1b5e20}
.status-fail,.status-revoked{background:#fbdada;color:#8e1b1b}
.status-unknown,.status-pending{background:#fff1c2;color:#6d4c00}
.status-expired,.status-used_up,.status-duplicate{background:#fde4cf;color:#7a3a00}
.status-excepted{background:#e0e7ff;color:#3730a3}
.status-in-grace{background:#fdf0d5;color:#8a4b00;outline:1px dashed #c2410c;outline-offset:-1px}
.cards{display:flex;gap:1rem;flex-wrap:wrap}
.card{background:#fff;border:1px solid #e3e6ea;border-radius:.5rem;padding:.6rem 1rem;min-width:15rem;flex:1}
.card h2{margin:.2rem 0;font-size:1rem}
.big{font-size:2rem;margin:.2rem 0}
.plain{list-style:none;padding:0;margin:0}
.filters{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:end;margin-bottom:1rem}
.filters label,.stack label{display:flex;flex-direction:column;font-size:.85rem}
.stack{display:flex;flex-direction:column;gap:.8rem;max-width:26rem}
input,select,button{font:inherit;padding:.3rem .5rem}
button,.button{cursor:pointer;border:1px solid #1f6feb;background:#1f6feb;color:#fff;border-radius:.3rem;text-decoration:none;padding:.3rem .8rem}
.signout button{background:transparent;border-color:#dfe7f1}
.danger{background:#b42318;border-color:#b42318;color:#fff}
.error{color:#8e1b1b;background:#fbdada;padding:.5rem .8rem;border-radius:.3rem}
.warning{background:#fff1c2;padding:.5rem .8rem;border-radius:.3rem}
.note{background:#e8f0fe;padding:.5rem .8rem;border-radius:.3rem}
.result{background:#fff;border:1px solid #e3e6ea;border-left:4px solid #9ca3af;border-radius:.3rem;padding:.5rem .9rem;margin:.6rem 0}
.result-fail{border-left-color:#c62828}.result-pass{border-left-color:#2e7d32}.result-unknown{border-left-color:#f9a825}
.prose{white-space:pre-line}
.evidence{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;font-size:.9rem}
.evidence dt{font-family:ui-monospace,monospace;color:#4b5563}.evidence dd{margin:0;word-break:break-word}
.identity{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1.2rem;background:#fff;padding:.8rem 1rem;border:1px solid #e3e6ea;border-radius:.3rem}
.identity dt{color:#4b5563}.identity dd{margin:0}
pre.copy{background:#0f172a;color:#e2e8f0;padding:.6rem .8rem;border-radius:.3rem;white-space:pre-wrap;word-break:break-all;user-select:all}
.enroll{display:flex;gap:2rem;flex-wrap:wrap}.enroll>div{flex:1;min-width:20rem}
.qr svg{width:220px;height:220px}
.failure{background:#fff;border:1px solid #e3e6ea;border-radius:.3rem;padding:.5rem .9rem;margin:.6rem 0}
.chart{margin:0}.chart svg{max-width:100%;height:auto;background:#fff;border:1px solid #e3e6ea}
.pager{margin-top:1rem;display:flex;gap:1rem}
.inline{margin:.5rem 0}
code{font-family:ui-monospace,monospace;font-size:.9em}
.scroll{overflow-x:auto;max-width:100%}
.cells{display:inline-flex;gap:2px}
.cell{font:600 .68rem/1.5 ui-monospace,monospace;padding:0 .25rem;border-radius:.2rem;background:#e5e7eb}
.status-not_applicable{background:#eef0f3;color:#4b5563}
.devices td{white-space:nowrap}
.label{background:#eef2ff;border-radius:.2rem;padding:0 .25rem;font-size:.8rem}
.since{margin:.2rem 0;font-weight:600;color:#8e1b1b}
.identity dd,.identity code{overflow-wrap:anywhere;min-width:0}
@media (max-width:640px){main{padding:.6rem .7rem 2rem}header{gap:.6rem;padding:.5rem .7rem}header nav{flex-wrap:wrap;gap:.6rem}
.identity{grid-template-columns:1fr}.identity dt{font-weight:600;margin-top:.3rem}.card{min-width:100%}
.enroll>div{min-width:100%}.signout{margin-left:0;flex-wrap:wrap}}
`;
