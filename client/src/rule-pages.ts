// Rule pages open rendered and read-only. The server links each diagnostic and hover to the page
// file bundled next to it (dist/rules/BXnnn.md), which every LSP editor can open; in VS Code that
// would open an editable markdown source from the extension's folder. The client points those links
// at the command bitexact.showRule instead, which renders the page with VS Code's own markdown
// renderer into a webview without scripts — one panel, reused for every rule.
import * as fs from 'node:fs/promises';
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';

export const SHOW_RULE = 'bitexact.showRule';
const RULE_ID = /^BX\d{3}$/;
/** A bundled rule page's file URI, as the server writes it (convert.ts ruleDocUri). */
const PAGE_PATH = /\/rules\/(BX\d{3})\.md$/;

export function ruleCommandUri(rule: string): vscode.Uri {
  return vscode.Uri.parse(`command:${SHOW_RULE}?${encodeURIComponent(JSON.stringify([rule]))}`);
}

/** Diagnostics and hovers from the server with their rule-page links sent to bitexact.showRule. */
export function rulePageMiddleware(): Middleware {
  return {
    async provideDiagnostics(document, previousResultId, token, next) {
      const report = await next(document, previousResultId, token);
      if (report && report.kind === 'full') report.items = report.items.map(withPageCommand);
      return report;
    },
    handleDiagnostics(uri, diagnostics, next) {
      next(uri, diagnostics.map(withPageCommand));
    },
    async provideHover(document, position, token, next) {
      const hover = await next(document, position, token);
      if (!hover) return hover;
      const contents = hover.contents.map((part) => {
        if (!(part instanceof vscode.MarkdownString)) return part;
        const value = part.value.replace(/\]\((file:[^)\s]*\/rules\/(BX\d{3})\.md)\)/g, (_all, _uri, rule: string) => `](${ruleCommandUri(rule).toString()})`);
        const rewritten = new vscode.MarkdownString(value);
        // Only this one command may run from the hover's links.
        rewritten.isTrusted = { enabledCommands: [SHOW_RULE] };
        return rewritten;
      });
      return new vscode.Hover(contents, hover.range);
    },
  };
}

function withPageCommand(diagnostic: vscode.Diagnostic): vscode.Diagnostic {
  const code = diagnostic.code;
  if (diagnostic.source !== 'bitexact' || typeof code !== 'object' || !(code.target instanceof vscode.Uri)) return diagnostic;
  const rule = PAGE_PATH.exec(code.target.path)?.[1];
  if (rule) diagnostic.code = { value: code.value, target: ruleCommandUri(rule) };
  return diagnostic;
}

/** The command that shows a rule's page; `pagesDir` holds the pages the build wrote. */
export function registerRulePages(pagesDir: vscode.Uri): vscode.Disposable[] {
  let panel: vscode.WebviewPanel | undefined;
  const show = async (asked: unknown) => {
    // From the palette there is no argument: pick one of the bundled pages.
    const rule = asked === undefined ? await pickRule(pagesDir) : asked;
    if (rule === undefined) return;
    if (typeof rule !== 'string' || !RULE_ID.test(rule)) {
      void vscode.window.showErrorMessage(`bitexact: no rule named ${JSON.stringify(rule)}.`);
      return;
    }
    const file = vscode.Uri.joinPath(pagesDir, `${rule}.md`);
    let markdown: string;
    try {
      markdown = await fs.readFile(file.fsPath, 'utf8');
    } catch (error) {
      void vscode.window.showErrorMessage(`bitexact: the page of ${rule} is missing from the extension (${(error as Error).message}).`);
      return;
    }
    const body = await renderMarkdown(markdown);
    const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? rule;
    if (!panel) {
      panel = vscode.window.createWebviewPanel('bitexact.rulePage', title, vscode.ViewColumn.Beside, { enableScripts: false, enableFindWidget: true });
      panel.onDidDispose(() => (panel = undefined));
    }
    panel.title = title;
    panel.webview.html = rulePageHtml(panel.webview.cspSource, title, body);
    panel.reveal(undefined, true);
  };
  return [vscode.commands.registerCommand('bitexact.showRule', show), { dispose: () => panel?.dispose() }];
}

async function pickRule(pagesDir: vscode.Uri): Promise<string | undefined> {
  const names = (await fs.readdir(pagesDir.fsPath).catch(() => [] as string[])).filter((n) => /^BX\d{3}\.md$/.test(n)).sort();
  const items = await Promise.all(
    names.map(async (name) => {
      const head = (await fs.readFile(vscode.Uri.joinPath(pagesDir, name).fsPath, 'utf8')).split('\n', 3);
      const [, id = name.slice(0, 5), slug = ''] = /^#\s+(\S+)\s*(.*)$/.exec(head[0] ?? '') ?? [];
      return { label: id, description: slug, detail: head[2]?.replace(/`/g, '').trim() };
    }),
  );
  return (await vscode.window.showQuickPick(items, { title: 'bitexact: show a rule', matchOnDescription: true, matchOnDetail: true }))?.label;
}

/** VS Code's markdown renderer (the built-in markdown extension); the escaped source if it is absent. */
async function renderMarkdown(markdown: string): Promise<string> {
  try {
    const html = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
    if (typeof html === 'string') return html;
  } catch {
    // The built-in markdown extension can be disabled: fall through to the plain text.
  }
  return `<pre>${escapeHtml(markdown)}</pre>`;
}

export function rulePageHtml(cspSource: string, title: string, body: string): string {
  // No scripts at all; styles only from the webview itself, images only from the extension.
  const csp = `default-src 'none'; img-src ${cspSource} data:; style-src 'unsafe-inline'`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); max-width: 52rem; padding: 0 1.5rem 2rem; line-height: 1.5; }
code, pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
pre { background: var(--vscode-textCodeBlock-background); padding: 0.6rem 0.8rem; overflow-x: auto; }
a { color: var(--vscode-textLink-foreground); }
h1 { font-size: 1.6em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 0.3em; }
</style></head>
<body data-rule-page="${escapeHtml(title)}">${body}</body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
