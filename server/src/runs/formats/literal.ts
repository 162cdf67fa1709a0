// A small parser for JSON and Python literal dicts that keeps every number's printed text.
// JSON.parse cannot: it drops the text (so precision cannot be judged) and rejects the NaN/Infinity
// that Python's json.dumps writes. One parser covers JSON Lines, trainer_state.json and the
// `{'loss': 0.1234, ...}` lines the HF Trainer prints (single quotes, True/None, nan, np.float64(…)).

export class NumberToken {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

export type Literal = null | boolean | string | NumberToken | Literal[] | LiteralObject;
/** A Map, not a plain object, so keys such as `__proto__` stay data. */
export type LiteralObject = Map<string, Literal>;

export class LiteralError extends Error {}

const MAX_DEPTH = 64;
const NUMBER_AT = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y;
const WORD_AT = /[A-Za-z_][A-Za-z0-9_.]*/y;

/** Parses one value that must fill `text` (surrounding whitespace allowed). Throws LiteralError. */
export function parseLiteral(text: string): Literal {
  const parser = new Parser(text);
  const value = parser.value(0);
  parser.skipSpace();
  if (parser.pos !== text.length) parser.fail('unexpected text after the value');
  return value;
}

export function isObject(value: Literal | undefined): value is LiteralObject {
  return value instanceof Map;
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(message: string): never {
    throw new LiteralError(`${message} at column ${this.pos + 1}`);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  value(depth: number): Literal {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === undefined) this.fail('unexpected end of text');
    if (c === '{') return this.object(depth);
    if (c === '[') return this.sequence(depth, ']');
    if (c === '(') return this.sequence(depth, ')');
    if (c === '"' || c === "'") return this.string(c);
    NUMBER_AT.lastIndex = this.pos;
    const number = NUMBER_AT.exec(this.text);
    if (number && !/^[-+]$/.test(number[0])) {
      this.pos += number[0].length;
      return new NumberToken(Number(number[0]), number[0]);
    }
    return this.word(depth);
  }

  private word(depth: number): Literal {
    const sign = this.text[this.pos] === '-' || this.text[this.pos] === '+' ? this.text[this.pos]! : '';
    WORD_AT.lastIndex = this.pos + sign.length;
    const m = WORD_AT.exec(this.text);
    if (!m) this.fail('expected a value');
    this.pos += sign.length + m[0].length;
    const word = m[0];
    const special = specialNumber(word);
    if (special !== undefined) return new NumberToken(sign === '-' ? -special : special, sign + word);
    if (sign) this.fail(`unexpected '${sign}'`);
    if (word === 'true' || word === 'True') return true;
    if (word === 'false' || word === 'False') return false;
    if (word === 'null' || word === 'None') return null;
    // np.float64(0.5), tensor(0.5), Decimal('0.5'): the first argument is the value that was logged.
    this.skipSpace();
    if (this.text[this.pos] === '(') {
      const args = this.sequence(depth, ')') as Literal[];
      return args[0] ?? null;
    }
    this.fail(`unknown name '${word}'`);
  }

  private object(depth: number): LiteralObject {
    this.pos++; // {
    const out: LiteralObject = new Map();
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const keyValue = this.value(depth + 1);
      const key = keyValue instanceof NumberToken ? keyValue.text : typeof keyValue === 'string' ? keyValue : undefined;
      if (key === undefined) this.fail('expected a string key');
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      out.set(key, this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') this.fail("expected ',' or '}'");
    }
  }

  private sequence(depth: number, close: string): Literal[] {
    this.pos++; // [ or (
    const out: Literal[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === close) {
        this.pos++;
        return out;
      }
      out.push(this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== close) this.fail(`expected ',' or '${close}'`);
    }
  }

  private string(quote: string): string {
    let out = '';
    this.pos++;
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail('unterminated string');
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.text[this.pos++];
      if (e === undefined) this.fail('unterminated string');
      if (e === 'u' || e === 'x') {
        const width = e === 'u' ? 4 : 2;
        const hex = this.text.slice(this.pos, this.pos + width);
        if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) this.fail('bad escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += width;
      } else {
        out += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
      }
    }
  }
}

function specialNumber(word: string): number | undefined {
  switch (word) {
    case 'NaN':
    case 'nan':
      return NaN;
    case 'Infinity':
    case 'inf':
      return Infinity;
    default:
      return undefined;
  }
}
