// The extension manifest against the server's settings table, and the packaged .vsix itself.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAIR_SETTING_DESCRIPTORS } from '../../client/src/pair-settings.js';
import { SETTING_DESCRIPTORS } from '../../server/src/lsp/settings.js';
import { ROOT } from '../support/checker.js';

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('package.json contributes', () => {
  it('declares every server setting with the same type, enum and default', () => {
    const properties = manifest.contributes.configuration.properties as Record<string, { type: string; default: unknown; enum?: string[]; items?: { type: string } }>;
    for (const d of SETTING_DESCRIPTORS) {
      const p = properties[`bitexact.${d.key}`];
      expect(p, `bitexact.${d.key}`).toBeDefined();
      expect(p!.type).toBe(d.type);
      expect(p!.default).toEqual(d.default);
      expect(p!.enum).toEqual(d.enum);
      if (d.type === 'array') expect(p!.items).toEqual({ type: 'string' });
    }
    // The ad-hoc pair defaults the client reads (pair-settings.ts), each described.
    for (const d of PAIR_SETTING_DESCRIPTORS) {
      const p = properties[`bitexact.pair.${d.key}`] as { type: string; default: unknown; enum?: string[]; description?: string; additionalProperties?: unknown } | undefined;
      expect(p, `bitexact.pair.${d.key}`).toBeDefined();
      expect([p!.type, p!.default, p!.enum, p!.description]).toEqual([d.type, d.default, d.enum, d.description]);
      if (d.type === 'object') expect(p!.additionalProperties).toEqual({ type: 'string' });
    }
    // Only the server's settings and the pair defaults, plus the client library's own trace setting.
    expect(Object.keys(properties).sort()).toEqual([...SETTING_DESCRIPTORS.map((d) => `bitexact.${d.key}`), ...PAIR_SETTING_DESCRIPTORS.map((d) => `bitexact.pair.${d.key}`), 'bitexact.trace.server'].sort());
  });

  it('puts every command in the bitexact category and works in untrusted workspaces, except running training', () => {
    for (const c of manifest.contributes.commands) expect(c.category).toBe('bitexact');
    // Restricted mode: checking and comparing logs work; pair (which runs workspace code) is disabled.
    expect(manifest.capabilities.untrustedWorkspaces.supported).toBe('limited');
    const commands = new Map(manifest.contributes.commands.map((c: { command: string }) => [c.command, c]));
    for (const id of ['bitexact.pairRuns', 'bitexact.runPair', 'bitexact.runConfiguration', 'bitexact.rerunPair', 'bitexact.pairRunWithFix', 'bitexact.pairRunSuspectFixed']) expect(commands.get(id), id).toMatchObject({ enablement: 'isWorkspaceTrusted' });
    for (const id of ['bitexact.checkWorkspace', 'bitexact.compareLogs', 'bitexact.showConfiguration']) expect(commands.get(id)).not.toHaveProperty('enablement');
    // Every contributed command is registered by the client, and every registered one contributed.
    const sources = fs.readdirSync(path.join(ROOT, 'client/src')).map((f) => fs.readFileSync(path.join(ROOT, 'client/src', f), 'utf8'));
    const registered = sources.flatMap((text) => [...text.matchAll(/registerCommand\('([\w.]+)'/g)].map((m) => m[1]));
    expect(registered.sort()).toEqual([...commands.keys()].sort());
    expect(manifest.activationEvents).toEqual(['onLanguage:python', 'onNotebook:jupyter-notebook']);
    for (const g of manifest.contributes.grammars) expect(fs.existsSync(path.join(ROOT, g.path))).toBe(true);
  });

  it('puts the Runs tree in an activity-bar container of its own, with an SVG icon in the repo that the .vsix ships', () => {
    const containers = manifest.contributes.viewsContainers.activitybar as { id: string; title: string; icon: string }[];
    expect(containers.map((c) => c.id)).toEqual(['bitexact']);
    const icon = containers[0]!.icon;
    expect(icon).toMatch(/\.svg$/);
    // An SVG the workbench can tint: drawn with currentColor, no fixed colour, nothing remote.
    const svg = fs.readFileSync(path.join(ROOT, icon), 'utf8');
    expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain('currentColor');
    expect(svg).not.toMatch(/#[0-9a-f]{3,6}\b|href=/i);
    expect(fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8').split('\n')).toContain(`!${icon}`);
    const views = manifest.contributes.views as Record<string, { id: string }[]>;
    expect(Object.keys(views)).toEqual(['bitexact']);
    // The Runs tree, then the Divergence webview (a view of type webview has a provider, not a tree).
    expect(views['bitexact']!.map((v) => [v.id, (v as { type?: string }).type ?? 'tree'])).toEqual([
      ['bitexact.runs', 'tree'],
      ['bitexact.divergence', 'webview'],
    ]);
    const client = fs.readFileSync(path.join(ROOT, 'client/src/divergence-view.ts'), 'utf8');
    expect(client).toContain("DIVERGENCE_VIEW = 'bitexact.divergence'");
    expect(client).toContain('registerWebviewViewProvider(DIVERGENCE_VIEW');
    // Every view/item action names a command the manifest contributes and a view it has.
    const ids = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
    // and only rows the Runs view makes (their contextValue); every inline action has an icon.
    const runsView = fs.readFileSync(path.join(ROOT, 'client/src/runs-view.ts'), 'utf8');
    const made = new Set([...runsView.matchAll(/contextValue = ([^;]+);/g)].flatMap((m) => [...m[1]!.matchAll(/'((?:config|pair|hazard)[\w-]*)'/g)].map((q) => q[1])));
    expect([...made].sort()).toEqual(['config', 'config-broken', 'hazard', 'hazard-fixable', 'pair', 'pair-cancelling', 'pair-failed', 'pair-running', 'pair-settled', 'pair-watched']);
    for (const entry of manifest.contributes.menus['view/item/context']) {
      expect(ids.has(entry.command), entry.command).toBe(true);
      expect(entry.when).toMatch(/^view == bitexact\.runs\b/);
      const exact = /viewItem == ([\w-]+)$/.exec(entry.when)?.[1];
      const pattern = /viewItem =~ \/(.+)\/$/.exec(entry.when)?.[1];
      const values = exact ? [exact] : pattern ? [...made].filter((v) => new RegExp(pattern).test(v)) : [];
      expect(values.length, entry.when).toBeGreaterThan(0);
      for (const v of values) expect(made.has(v), `${entry.command}: ${v}`).toBe(true);
      if (entry.group.startsWith('inline')) expect(manifest.contributes.commands.find((c: { command: string }) => c.command === entry.command).icon, entry.command).toMatch(/^\$\([\w-]+\)$/);
    }
    // A running pair (this window's or one followed from a terminal) can be cancelled but not deleted; a finished one re-run and deleted.
    const when = (command: string) => manifest.contributes.menus['view/item/context'].filter((e: { command: string }) => e.command === command).map((e: { when: string }) => e.when);
    const rows = (w: string) => [...made].sort().filter((v) => new RegExp(/viewItem =~ \/(.+)\/$/.exec(w)?.[1] ?? `^${/viewItem == ([\w-]+)$/.exec(w)?.[1]}$`).test(v));
    expect(when('bitexact.cancelPair').map(rows)).toEqual([['pair-running', 'pair-watched'], ['pair-running', 'pair-watched']]);
    expect(when('bitexact.deletePair').some((w: string) => w.includes('running'))).toBe(false);
  });
});

describe('npm run package', () => {
  it('makes a .vsix under 2 MB with both bundles, both wasm files, the rule pages and the grammar', () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-vsix-')), 'bitexact.vsix');
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--readme-path', 'client/README.md', '--out', out], {
      cwd: ROOT,
      stdio: 'pipe',
    });
    const size = fs.statSync(out).size;
    expect(size).toBeLessThan(2 * 1024 * 1024);
    // python3 is on every machine; its zipfile module lists the archive.
    const names: string[] = JSON.parse(
      execFileSync('python3', ['-c', 'import json,sys,zipfile; print(json.dumps(zipfile.ZipFile(sys.argv[1]).namelist()))', out], { encoding: 'utf8' }),
    );
    for (const required of [
      'extension/package.json',
      'extension/dist/cli.cjs',
      'extension/dist/extension.cjs',
      'extension/dist/web-tree-sitter.wasm',
      'extension/dist/tree-sitter-python.wasm',
      'extension/dist/rules/BX102.md',
      'extension/syntaxes/bitexact-suppression.tmLanguage.json',
      'extension/media/bitexact.svg',
      'extension/dist/webview/divergence.js',
      'extension/dist/webview/divergence.css',
      'extension/python/sitecustomize/sitecustomize.py',
    ]) {
      expect(names).toContain(required);
    }
    expect(names.some((n) => n.includes('node_modules') || n.endsWith('.map') || n.includes('/test/'))).toBe(false);
  }, 60_000);
});
