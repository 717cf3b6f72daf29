/**
 * The page's HTML and CSS, shipped in the CLI's bundle; its script (`dist/ui/app.js`) is built from `page/`
 * by `tsup.ui.config.ts`. Nothing is fetched from anywhere but this server, and nothing inline runs: the
 * Content-Security-Policy below forbids it.
 */

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join("; ");

export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mesh-state</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the view</a>
<header>
  <strong class="brand">mesh-state</strong>
  <nav aria-label="Views" id="nav"></nav>
  <p id="connection" role="status" aria-live="polite">connecting…</p>
</header>
<main id="main" tabindex="-1"><p>Loading…</p></main>
<noscript>This view needs JavaScript (served by mesh-state ui itself; nothing from the internet).</noscript>
</body>
</html>
`;

export const APP_CSS = `
:root { color-scheme: light dark; --fresh: #f5c542; --muted: #777; --bad: #c0392b; --ok: #2e8b57; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid #8884; flex-wrap: wrap; }
header nav { display: flex; gap: 1rem; flex-wrap: wrap; }
#connection { margin: 0 0 0 auto; }
#connection.live::before { content: "● "; color: var(--ok); }
#connection.down { color: var(--bad); font-weight: 600; }
main { padding: 1rem; max-width: 90rem; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: .5rem; background: Canvas; padding: .25rem; }
a:focus-visible, button:focus-visible, input:focus-visible, main:focus-visible { outline: 3px solid Highlight; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
td.value { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.fresh td { background: color-mix(in srgb, var(--fresh) 35%, transparent); }
.badge { font-size: 11px; border-radius: 3px; padding: 0 .3rem; margin-left: .4rem; background: var(--fresh); color: #000; }
.badge.deleted { background: var(--bad); color: #fff; }
.muted { color: var(--muted); }
.refused { color: var(--bad); font-weight: 600; }
.pager { display: flex; gap: .5rem; align-items: center; }
.health dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
.health dd { margin: 0; }
ol.changes { font-family: ui-monospace, monospace; max-height: 12rem; overflow: auto; }
button.link { background: none; border: none; color: LinkText; text-decoration: underline; cursor: pointer; padding: 0; font: inherit; }
`;
