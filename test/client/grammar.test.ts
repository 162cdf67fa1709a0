// The suppression-comment injection grammar, tokenised by VS Code's own TextMate engine
// (vscode-textmate + vscode-oniguruma) on top of a host grammar with the Python comment scopes.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as oniguruma from 'vscode-oniguruma';
import { INITIAL, IGrammar, parseRawGrammar, Registry } from 'vscode-textmate';
import { ROOT } from '../support/checker.js';

let grammar: IGrammar;

beforeAll(async () => {
  const wasm = fs.readFileSync(path.join(ROOT, 'node_modules/vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const files: Record<string, string> = {
    'source.python': path.join(ROOT, 'test/fixtures/grammar/python-comments.tmLanguage.json'),
    'bitexact.suppression.injection': path.join(ROOT, 'syntaxes/bitexact-suppression.tmLanguage.json'),
  };
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const registry = new Registry({
    onigLib: Promise.resolve({ createOnigScanner: (s) => new oniguruma.OnigScanner(s), createOnigString: (s) => new oniguruma.OnigString(s) }),
    loadGrammar: async (scope) => (files[scope] ? parseRawGrammar(fs.readFileSync(files[scope]!, 'utf8'), files[scope]) : null),
    // What VS Code does with the manifest's `injectTo`.
    getInjections: (scope) =>
      manifest.contributes.grammars.filter((g: { injectTo?: string[] }) => g.injectTo?.includes(scope)).map((g: { scopeName: string }) => g.scopeName),
  });
  grammar = (await registry.loadGrammar('source.python'))!;
});

function scopesOf(line: string): Array<[string, string]> {
  const { tokens } = grammar.tokenizeLine(line, INITIAL);
  return tokens.map((t) => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]!]);
}

describe('suppression comment grammar', () => {
  it('scopes the directive, each rule id and the reason', () => {
    const tokens = scopesOf('x = f()  # bitexact: ignore[BX102, BX205] -- measured on H200');
    expect(tokens).toEqual(
      expect.arrayContaining([
        ['bitexact', 'keyword.other.bitexact'],
        ['ignore', 'keyword.control.directive.suppression.bitexact'],
        ['BX102', 'constant.other.rule-id.bitexact'],
        ['BX205', 'constant.other.rule-id.bitexact'],
        ['--', 'punctuation.separator.reason.bitexact'],
        ['measured on H200', 'string.unquoted.reason.bitexact'],
      ]),
    );
  });

  it('marks ids that are not rule ids and handles the file form', () => {
    expect(scopesOf('# bitexact: ignore-file[BX1O2]')).toEqual(
      expect.arrayContaining([
        ['ignore-file', 'keyword.control.directive.suppression.bitexact'],
        ['BX1O2', 'invalid.illegal.rule-id.bitexact'],
      ]),
    );
  });

  it('leaves ordinary comments and strings alone', () => {
    expect(scopesOf('# just a comment about bitexact').every(([, s]) => !s.endsWith('.bitexact'))).toBe(true);
    expect(scopesOf('s = "bitexact: ignore[BX102]"').every(([, s]) => !s.endsWith('.bitexact'))).toBe(true);
  });
});
