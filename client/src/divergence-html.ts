// The Divergence webview's page: a strict Content-Security-Policy (nothing by default; the bundle's
// script and style from the extension only, the script by nonce; no remote content, no inline
// handlers), the bundle and its stylesheet, and the static frame the app fills in.
import crypto from 'node:crypto';

export interface DivergencePage {
  /** webview.cspSource: where the webview may load the extension's files from. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce?: string;
}

export function newNonce(): string {
  return crypto.randomBytes(18).toString('base64url');
}

export function divergenceHtml(page: DivergencePage): string {
  const nonce = page.nonce ?? newNonce();
  const csp = [`default-src 'none'`, `script-src 'nonce-${nonce}'`, `style-src ${page.cspSource}`, `img-src ${page.cspSource} data:`, `font-src ${page.cspSource}`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(page.styleUri)}">
<title>Divergence</title>
</head>
<body>
<main id="app" aria-live="polite">
  <p id="status">Select a pair in the Runs view to see where its runs part.</p>
</main>
<script nonce="${nonce}" src="${escapeAttr(page.scriptUri)}"></script>
</body>
</html>
`;
}

function escapeAttr(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
