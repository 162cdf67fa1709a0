// What the cross-file passes (cross-file.ts) read of a program's files — a word search, a parse for
// one name's uses, a file's calls — memoised per SourceFile object: the server keeps one for as long
// as a file's text is unchanged, so an unchanged file is never read twice.
import type { Analyzer } from './engine.js';
import type { Settings } from './config.js';
import type { NameUses } from './no-grad-callers.js';
import type { CallEdge } from './program.js';
import type { FunctionSeeding } from './seeding-functions.js';
import type { SwitchValue } from './launch-switches.js';
import type { LaunchSwitch } from './rules/rule.js';

export interface SourceFile {
  path: string;
  text: string;
  settings: Settings;
  /** A test, benchmark, docs or build file (roles.ts). */
  offPath: boolean;
  /** Its Python module from the project root (`pkg.layers.wrappers`; module-names.ts), if it has one. */
  module?: string;
  /** It is a package's `__init__.py`. */
  isPackage?: boolean;
}

/** A name `\bname\b` finds exactly where it is one of the text's maximal runs of word characters. */
const PLAIN_WORD = /^\w+$/;

/** What the passes read of a program's files, each answer kept per SourceFile (one text of one file). */
export class ProgramReader {
  /**
   * Work done, counted (the server's bitexact/stats): the passes' questions answered afresh (is a
   * function only ever called without gradients, a kernel switch left off...), and the files read
   * for an answer not yet kept, per kind (a parse for calls, uses, seeding or launches; a text search).
   */
  readonly counts = { questions: 0, calls: 0, uses: 0, seeds: 0, launches: 0, compiles: 0, mentions: 0 };
  private readonly memo = new WeakMap<SourceFile, Map<string, unknown>>();

  constructor(private readonly analyzer: Analyzer) {}

  private cached<T>(file: SourceFile, key: string, make: () => T): T {
    let answers = this.memo.get(file);
    if (!answers) this.memo.set(file, (answers = new Map()));
    if (answers.has(key)) return answers.get(key) as T;
    const answer = make();
    answers.set(key, answer);
    return answer;
  }

  /** Does the file's text match `pattern` (a definition, a launch)? */
  mentions(file: SourceFile, pattern: RegExp): boolean {
    return this.cached(file, `m\u0000${pattern.source}\u0000${pattern.flags}`, () => (this.counts.mentions++, pattern.test(file.text)));
  }

  /**
   * Does the file's text hold `name` as a word (what `\bname\b` matches)? A set of the text's words,
   * made once per text, answers every name: a regular expression per name and file made a dense file's
   * pull (350 names, 50 files) spend most of its time in these searches.
   */
  mentionsWord(file: SourceFile, name: string): boolean {
    if (!PLAIN_WORD.test(name)) return this.mentions(file, new RegExp(`\\b${name}\\b`));
    return this.cached(file, 'words', () => (this.counts.mentions++, new Set(file.text.match(/\w+/g)))).has(name);
  }

  /** The file's unconditional calls (program.ts); `known`: already read from a parse made anyway. */
  callsOf(file: SourceFile, known?: CallEdge[]): CallEdge[] {
    return this.cached(file, 'calls', () => known ?? (this.counts.calls++, this.analyzer.callsOf(file.text)));
  }

  /** The uses of `name` in the file; one parse answers every name of `batch` the file mentions. */
  usesOf(file: SourceFile, name: string, batch: Iterable<string>): NameUses {
    const key = (n: string) => `u\u0000${n}`;
    const answers = this.memo.get(file);
    if (answers?.has(key(name))) return answers.get(key(name)) as NameUses;
    const names = [...new Set([name, ...[...batch].filter((n) => this.mentionsWord(file, n))])].filter((n) => !answers?.has(key(n)));
    this.counts.uses++;
    const uses = this.analyzer.usesOf(file.text, names);
    for (const n of names) this.cached(file, key(n), () => uses.get(n)!);
    return this.memo.get(file)!.get(key(name)) as NameUses;
  }

  /** Does the file compile a whole model on its default path? Parsed only when it names a compile call. */
  compilesWholeModel(file: SourceFile): boolean {
    if (!this.mentions(file, /\.compile\s*\(/)) return false;
    return this.cached(file, 'compiles', () => (this.counts.compiles++, this.analyzer.compilesWholeModel(file.text)));
  }

  functionSeedsTorch(file: SourceFile, name: string): FunctionSeeding {
    return this.cached(file, `s\u0000${name}`, () => (this.counts.seeds++, this.analyzer.functionSeedsTorch(file.text, name)));
  }

  launchSwitchValues(file: SourceFile, launch: LaunchSwitch): SwitchValue[] {
    return this.cached(file, `l\u0000${launch.kernel}\u0000${launch.param}`, () => (this.counts.launches++, this.analyzer.launchSwitchValues(file.text, launch)));
  }
}
