// The one-pass trigger scanner (analysis/triggers.ts) must answer what the regex and includes() it
// replaced answered: `\b(?:w1|...)\b` for words, text.includes(s) for substrings. Compared on the
// rules' real triggers over texts made of trigger fragments, word characters, punctuation and
// non-ASCII characters, where word boundaries and overlapping substrings are the hard cases.
import { describe, expect, it } from 'vitest';
import { RULES } from '../../server/src/analysis/rules/index.js';
import { TriggerScanner } from '../../server/src/analysis/triggers.js';

const triggers = [...new Set(['bitexact', ...RULES.flatMap((r) => r.triggers)])];
const words = triggers.filter((t) => /^\w+$/.test(t));
const others = triggers.filter((t) => !/^\w+$/.test(t));
const substrings = [...new Set([...others, ...RULES.flatMap((r) => r.requires ?? []), 'bitexact', 'é(x'])];
const counts = substrings.map((t) => others.includes(t));
const scanner = new TriggerScanner(words, substrings, counts);
const wordRegex = new RegExp(`\\b(?:${words.join('|')})\\b`, 'g');

function reference(text: string) {
  const found = { words: [...new Set(text.match(wordRegex) ?? [])].sort(), substrings: substrings.filter((t) => text.includes(t)) };
  return { ...found, mayMatch: found.words.length > 0 || others.some((t) => text.includes(t)) };
}

/** A small deterministic generator (no Math.random: a failure must reproduce). */
function* texts(count: number): Generator<string> {
  let seed = 12345;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const pieces = [...words, ...others, ...substrings, 'x', '_', '1', ' ', '.', '(', ')', '\n', 'é', '中', 'in', 'put', 'torch.', 'seed'];
  for (let i = 0; i < count; i++) {
    let text = '';
    const n = next(12);
    for (let k = 0; k < n; k++) {
      const piece = pieces[next(pieces.length)]!;
      // Cut pieces too, so prefixes and suffixes of triggers meet.
      text += next(3) === 0 ? piece.slice(next(piece.length + 1)) : piece;
    }
    yield text;
  }
}

describe('TriggerScanner', () => {
  it('finds what the word regex and includes() find', () => {
    for (const text of texts(5000)) {
      const found = scanner.scan(text);
      const want = reference(text);
      expect({ words: [...found.words].sort(), substrings: [...found.substrings], mayMatch: scanner.mayMatch(text) }, JSON.stringify(text)).toEqual(want);
      expect(scanner.matches(found)).toBe(want.mayMatch);
    }
  });

  it('reads whole words only, at the ends of the text too', () => {
    expect([...scanner.scan('input').words]).toEqual([]);
    expect([...scanner.scan('put').words]).toEqual(['put']);
    expect([...scanner.scan('éput中').words]).toEqual(['put']);
    expect(scanner.mayMatch('index_add_x')).toBe(false);
    expect([...scanner.scan('x.index_add_(').words]).toEqual(['index_add_']);
  });

  it('refuses a word trigger that is not a word', () => {
    expect(() => new TriggerScanner(['a.b'], [], [])).toThrow(/not a word/);
  });
});
