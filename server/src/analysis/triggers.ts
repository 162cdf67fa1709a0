// Which rule triggers a text holds, in one pass over its characters (issue 14: one regex of several
// hundred alternatives plus one `includes` per substring trigger cost as much as a tenth of the
// analysis of the standard library). Words are read as regex `\b(?:w1|w2|...)\b` reads them: a
// maximal run of ASCII word characters [A-Za-z0-9_] equal to a trigger (so `put` never fires on
// `input`); substrings as `text.includes(s)` reads them, found by an Aho–Corasick automaton, which
// sees every occurrence, overlapping ones included.

/** The word character's column in the word trie's table, else -1 (regex `\w` is ASCII only). */
const WORD_COLUMN = new Int8Array(128).fill(-1);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/\w/.test(ch)) WORD_COLUMN[c] = c <= 57 ? c - 48 : c === 95 ? 10 : c <= 90 ? c - 65 + 11 : c - 97 + 37;
}
const WORD_COLUMNS = 63;
/** Transitions read by the substring automaton: ASCII; any other character sends it to its root. */
const ASCII = 128;

export interface TriggersFound {
  words: Set<string>;
  substrings: Set<string>;
}

export class TriggerScanner {
  /** Word trie: state × WORD_COLUMNS → state (0: none; the root is state 1). */
  private readonly wordNext: Int32Array;
  /** Per trie state: 1 + index of the word ending there, or 0. */
  private readonly wordEnd: Int32Array;
  /** Substring automaton (complete, fail links folded in): state × ASCII → state; root is 0. */
  private readonly subNext: Int32Array;
  /** Per automaton state: the substrings ending there (through fail links too), by index. */
  private readonly subOut: number[][];
  /** Per automaton state: 1 when subOut is not empty. */
  private readonly subAny: Uint8Array;
  /** Substrings not made of ASCII characters only: checked with includes(). */
  private readonly others: number[];

  /**
   * `words` must be made of word characters. `counts` marks the substrings whose presence alone lets
   * `mayMatch` answer true (every word does).
   */
  constructor(
    private readonly words: readonly string[],
    private readonly substrings: readonly string[],
    private readonly counts: readonly boolean[],
  ) {
    // Word trie.
    let states = 2;
    const next: number[] = new Array(2 * WORD_COLUMNS).fill(0);
    const end: number[] = [0, 0];
    words.forEach((word, w) => {
      if (!/^\w+$/.test(word)) throw new Error(`not a word trigger: ${word}`);
      let s = 1;
      for (let i = 0; i < word.length; i++) {
        const at = s * WORD_COLUMNS + WORD_COLUMN[word.charCodeAt(i)]!;
        if (next[at] === 0) {
          next[at] = states++;
          next.push(...new Array(WORD_COLUMNS).fill(0));
          end.push(0);
        }
        s = next[at]!;
      }
      if (end[s] === 0) end[s] = w + 1;
    });
    this.wordNext = Int32Array.from(next);
    this.wordEnd = Int32Array.from(end);

    // Substring automaton: a trie of the ASCII substrings, then breadth-first fail links.
    this.others = [];
    const goto: Array<Map<number, number>> = [new Map()];
    const out: number[][] = [[]];
    substrings.forEach((sub, k) => {
      if (sub.length === 0 || !/^[\x00-\x7f]+$/.test(sub)) {
        this.others.push(k);
        return;
      }
      let s = 0;
      for (let i = 0; i < sub.length; i++) {
        const c = sub.charCodeAt(i);
        let t = goto[s]!.get(c);
        if (t === undefined) {
          t = goto.length;
          goto.push(new Map());
          out.push([]);
          goto[s]!.set(c, t);
        }
        s = t;
      }
      out[s]!.push(k);
    });
    const table = new Int32Array(goto.length * ASCII);
    const queue: number[] = [];
    for (const [c, t] of goto[0]!) {
      table[c] = t;
      queue.push(t);
    }
    const fail = new Int32Array(goto.length);
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      out[s]!.push(...out[fail[s]!]!);
      for (let c = 0; c < ASCII; c++) {
        const t = goto[s]!.get(c);
        if (t === undefined) table[s * ASCII + c] = table[fail[s]! * ASCII + c]!;
        else {
          fail[t] = table[fail[s]! * ASCII + c]!;
          table[s * ASCII + c] = t;
          queue.push(t);
        }
      }
    }
    this.subNext = table;
    this.subOut = out;
    this.subAny = Uint8Array.from(out, (o) => (o.length > 0 ? 1 : 0));
  }

  /** The triggers present in `text`, each set in the order its triggers were given. */
  scan(text: string): TriggersFound {
    const wordSeen = new Uint8Array(this.words.length);
    const subSeen = new Uint8Array(this.substrings.length);
    this.run(text, wordSeen, subSeen, false);
    const words = new Set<string>();
    const substrings = new Set<string>();
    for (let w = 0; w < this.words.length; w++) if (wordSeen[w]) words.add(this.words[w]!);
    for (let k = 0; k < this.substrings.length; k++) if (subSeen[k]) substrings.add(this.substrings[k]!);
    return { words, substrings };
  }

  /** What mayMatch answers for the text `found` was scanned from. */
  matches(found: TriggersFound): boolean {
    return found.words.size > 0 || this.substrings.some((t, k) => this.counts[k] && found.substrings.has(t));
  }

  /** Whether `text` holds any word trigger or a substring marked in `counts`. */
  mayMatch(text: string): boolean {
    return this.run(text, new Uint8Array(this.words.length), new Uint8Array(this.substrings.length), true);
  }

  /** Marks what it finds; with `stop`, returns true at the first word or counted substring. */
  private run(text: string, wordSeen: Uint8Array, subSeen: Uint8Array, stop: boolean): boolean {
    const { wordNext, wordEnd, subNext, subOut, subAny, counts } = this;
    let w = 1;
    let s = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= ASCII) {
        s = 0;
      } else {
        s = subNext[s * ASCII + c]!;
        if (subAny[s] !== 0) {
          const found = subOut[s]!;
          for (let f = 0; f < found.length; f++) {
            subSeen[found[f]!] = 1;
            if (stop && counts[found[f]!]) return true;
          }
        }
        const column = WORD_COLUMN[c]!;
        if (column >= 0) {
          if (w !== 0) w = wordNext[w * WORD_COLUMNS + column]!;
          continue;
        }
      }
      // A word run ends here: it is a trigger when the trie ends a word exactly at its last character.
      if (w > 1) {
        if (wordEnd[w] !== 0) {
          wordSeen[wordEnd[w]! - 1] = 1;
          if (stop) return true;
        }
      }
      w = 1;
    }
    if (w > 1 && wordEnd[w] !== 0) {
      wordSeen[wordEnd[w]! - 1] = 1;
      if (stop) return true;
    }
    for (const k of this.others) {
      if (text.includes(this.substrings[k]!)) {
        subSeen[k] = 1;
        if (stop && counts[k]) return true;
      }
    }
    return false;
  }
}
