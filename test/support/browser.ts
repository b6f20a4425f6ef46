import { execFileSync } from 'node:child_process';
import type { Page, Request } from 'playwright-core';

/** The browser the page tests drive: `CHROMIUM_PATH`, else `chromium` on PATH (Debian's package); null when there is none. */
export function chromiumPath(): string | null {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** What a page did wrong: requests answered >= 400 or failed, uncaught errors, console errors, requests outside the API. */
export interface PageProblems {
  badResponses: string[];
  failedRequests: string[];
  pageErrors: string[];
  consoleErrors: string[];
  outside: string[];
}

export const NO_PROBLEMS: PageProblems = { badResponses: [], failedRequests: [], pageErrors: [], consoleErrors: [], outside: [] };

/** Records what `page` does wrong from now on (see PageProblems). */
export function watchPage(page: Page, baseUrl: string): PageProblems {
  const problems: PageProblems = { badResponses: [], failedRequests: [], pageErrors: [], consoleErrors: [], outside: [] };
  page.on('response', (r) => {
    if (r.status() >= 400) problems.badResponses.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  // a request the browser cancels because the page itself is left (a reload, a goto: the test's own step) is not the page's
  // problem: ERR_ABORTED of a request sent before the main frame's latest navigation started
  let navigations = 0;
  const sentAt = new WeakMap<Request, number>();
  page.on('requestfailed', (r) => {
    const errorText = r.failure()?.errorText ?? '';
    if (errorText === 'net::ERR_ABORTED' && (sentAt.get(r) ?? navigations) < navigations) return;
    problems.failedRequests.push(`${r.url()}: ${errorText}`);
  });
  page.on('request', (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations++;
    else sentAt.set(r, navigations);
    if (!r.url().startsWith(baseUrl) && !r.url().startsWith('data:')) problems.outside.push(r.url());
  });
  page.on('pageerror', (e) => problems.pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.consoleErrors.push(m.text());
  });
  return problems;
}
