import { packageFile } from '../package-file';

/**
 * The rendered page of the OpenAPI document, at `GET /docs`: Swagger UI from the `swagger-ui-dist`
 * npm package, its files served by the API itself (no CDN: it works offline and behind a firewall).
 *
 * Why swagger-ui-dist: a prebuilt bundle (one script, one style sheet) with a single dependency,
 * maintained by SmartBear since 2015 (Apache-2.0), renders OpenAPI 3.1, and its "Try it out" with
 * the bearer API key works against this same origin. The other standalone renderers pull in a
 * framework's dependency tree (@scalar/api-reference: 28 direct dependencies, and it loads its fonts from its CDN unless told not to;
 * redoc 3: React and styled-components as peers). Its one network use, the validator badge
 * (validator.swagger.io), is turned off below (`validatorUrl: null`); the install-time analytics
 * of its dependency @scarf/scarf are off by `scarfSettings` in package.json.
 */

/** The files of the page, each served from `/docs/<name>`. */
export const DOCS_ASSETS = ['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png', 'favicon-16x16.png', 'init.js'] as const;
export type DocsAsset = (typeof DOCS_ASSETS)[number];

export const isDocsAsset = (name: string): name is DocsAsset => (DOCS_ASSETS as readonly string[]).includes(name);

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

export const contentTypeOf = (asset: DocsAsset): string => CONTENT_TYPES[asset.slice(asset.lastIndexOf('.'))];

/** The file in the package's directory (see `packageFile`: found whatever the package's `exports` allow). */
export const swaggerUiFile = (asset: Exclude<DocsAsset, 'init.js'>): string => packageFile('swagger-ui-dist', asset);

/** Starts Swagger UI on `/openapi.json` (a file of its own rather than an inline script: a strict CSP can forbid inline scripts). */
export const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // no badge from validator.swagger.io: the page makes no request outside this API
  validatorUrl: null,
});
`;

/**
 * The page may load and call nothing outside this API (the browser enforces it): scripts and styles
 * from its own files (Swagger UI sets inline styles), images inline or its own.
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

export const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Covel API</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;
