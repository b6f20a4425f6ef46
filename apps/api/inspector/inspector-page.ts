import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { packageFile } from '../package-file';

/**
 * The web prompt inspector, at `GET /inspector`: plain ES modules, no build step. Its own files
 * (assets/: app.js, the Play page's modules, style.css) and its libraries' prebuilt ES modules, read from node_modules
 * and served by the API itself (no CDN: it works offline and behind a firewall):
 *
 * - Preact + htm: components and hooks in about 6 kB, written as tagged templates the browser runs
 *   as they are (no JSX, so no compiler); both maintained by the Preact team, MIT.
 * - uPlot: the per-session chart (a small canvas chart library, MIT, no dependencies).
 *
 * The diff is the server's: the calls view carries the prefix report's own comparison
 * (libs/reports `comparePrefix`), so the page only draws offsets it is given.
 */

type Source = { pkg: string; file: string } | { own: string };

const ASSETS = {
  'app.js': { own: 'app.js' },
  'style.css': { own: 'style.css' },
  'http.js': { own: 'http.js' },
  'steering-marks.js': { own: 'steering-marks.js' },
  // the Play page (#/play): one module per concern
  'play-page.js': { own: 'play-page.js' },
  'play-session.js': { own: 'play-session.js' },
  'play-api.js': { own: 'play-api.js' },
  'play-story.js': { own: 'play-story.js' },
  'play-alternatives.js': { own: 'play-alternatives.js' },
  'story-view.js': { own: 'story-view.js' },
  'live-turn.js': { own: 'live-turn.js' },
  'session-stream.js': { own: 'session-stream.js' },
  'sse.js': { own: 'sse.js' },
  'preact.mjs': { pkg: 'preact', file: 'dist/preact.mjs' },
  'preact-hooks.mjs': { pkg: 'preact', file: 'hooks/dist/hooks.mjs' },
  'htm.mjs': { pkg: 'htm', file: 'dist/htm.mjs' },
  'uPlot.esm.js': { pkg: 'uplot', file: 'dist/uPlot.esm.js' },
  'uPlot.min.css': { pkg: 'uplot', file: 'dist/uPlot.min.css' },
} satisfies Record<string, Source>;

export type InspectorAsset = keyof typeof ASSETS;
export const INSPECTOR_ASSETS = Object.keys(ASSETS) as InspectorAsset[];
export const isInspectorAsset = (name: string): name is InspectorAsset => Object.prototype.hasOwnProperty.call(ASSETS, name);

export const inspectorContentType = (asset: InspectorAsset): string => (asset.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');

/** The file on disk: the page's own, or one in its package's directory (see `packageFile`: whatever the package's `exports` allow). */
export function inspectorFile(asset: InspectorAsset): string {
  const source: Source = ASSETS[asset];
  if ('own' in source) return join(__dirname, 'assets', source.own);
  return packageFile(source.pkg, source.file);
}

/** The bare module names the page's modules import, mapped to the files above. */
const IMPORT_MAP = JSON.stringify({
  imports: { preact: '/inspector/preact.mjs', 'preact/hooks': '/inspector/preact-hooks.mjs', htm: '/inspector/htm.mjs', uplot: '/inspector/uPlot.esm.js' },
});

/**
 * Nothing outside this API is loaded or called (the browser enforces it). The import map is the one
 * inline script, allowed by its hash.
 */
export const INSPECTOR_CSP = `default-src 'self'; script-src 'self' 'sha256-${createHash('sha256').update(IMPORT_MAP).digest('base64')}'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'`;

export const INSPECTOR_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Covel prompt inspector</title>
    <!-- no icon file: without this the browser asks for /favicon.ico, a 404 in its console -->
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="/inspector/uPlot.min.css" />
    <link rel="stylesheet" href="/inspector/style.css" />
    <script type="importmap">${IMPORT_MAP}</script>
  </head>
  <body>
    <div id="app">Loading…</div>
    <script type="module" src="/inspector/app.js"></script>
  </body>
</html>
`;
