// The questions the cross-file passes (cross-file.ts) ask of a program, each answered once per state
// of the program's files: is a function (as one file defines it) only ever called without gradients,
// or only from test functions; does every launch of a kernel leave a switch off; does a function a
// hit calls seed torch. The answers depend on the files' texts alone, never on the analysis that asks,
// so the language server keeps them between pulls (lsp/project-index.ts): an edit that leaves every
// file of the program as it was answers nothing afresh. When a file's text changes, `renewed` asks the
// same questions of the new files and says which asking files got another answer: only then do other
// open documents' findings change.
import { FileUses, reachedOnlyFromTests, runsOnlyWithoutGrad } from './no-grad-callers.js';
import type { ProgramReader, SourceFile } from './program-reader.js';
import type { FunctionSeeding } from './seeding-functions.js';
import type { Candidate } from './engine.js';
import type { LaunchSwitch } from './rules/rule.js';

type Question = { kind: 'grad' | 'test'; name: string; file: number } | { kind: 'launch'; launch: LaunchSwitch } | { kind: 'seed'; name: string };

export class ProgramQuestions {
  private readonly answers = new Map<string, { question: Question; answer: boolean }>();
  /** Per asking file (its index in `files`): the questions its last pass asked. */
  private readonly asked = new Map<number, Set<string>>();
  /** The names whose uses are looked up: a file's one parse answers all it mentions. */
  private readonly names = new Set<string>();
  /** Each name's module-level definitions in the training-path files, read once. */
  private readonly definitions = new Map<string, FunctionSeeding[]>();
  /** Per asking file, what the passes made of each of its candidates (undefined: dropped), and the questions that took. */
  private readonly outcomes = new Map<number, WeakMap<Candidate, { kept: Candidate | undefined; keys: string[] }>>();
  /** The questions asked while one candidate is decided (outcome). */
  private deciding: string[] | undefined;

  constructor(
    readonly reader: ProgramReader,
    readonly files: readonly SourceFile[],
    /** Every checked file, as a sub-project launches its parent's kernels. */
    readonly launchers: readonly SourceFile[],
    /** Candidates capped at info, per note: an unchanged hit stays the same object (its finding and diagnostic are kept). */
    private readonly capped = new WeakMap<Candidate, Map<string, Candidate>>(),
  ) {}

  /** File `asker`'s passes start: what it asked before is forgotten. */
  begin(asker: number): void {
    this.asked.set(asker, new Set());
  }

  /** The names the lookups of this pass will ask about, to be answered by one parse per file. */
  expect(names: Iterable<string>): void {
    for (const name of names) this.names.add(name);
  }

  /** Is every call of `name` (as file `file` defines it) made without gradients? */
  noGradOnly(name: string, file: number, asker: number): boolean {
    return this.ask(`g\u0000${file}\u0000${name}`, { kind: 'grad', name, file }, asker);
  }

  /** Is `name` (as file `file` defines it) reached only from test functions? */
  testOnly(name: string, file: number, asker: number): boolean {
    return this.ask(`t\u0000${file}\u0000${name}`, { kind: 'test', name, file }, asker);
  }

  /** Does every launch of the kernel, across the training-path files, leave the switch off by default? */
  launchOff(launch: LaunchSwitch, asker: number): boolean {
    return this.ask(`l\u0000${launch.kernel}\u0000${launch.param}`, { kind: 'launch', launch }, asker);
  }

  /** Does the function `name`, as a training-path file defines it, seed torch (itself, or three imports deep)? */
  seeds(name: string, asker: number): boolean {
    return this.ask(`s\u0000${name}`, { kind: 'seed', name }, asker);
  }

  /** Have the passes decided candidate `c` of file `asker` for these files? */
  decided(asker: number, c: Candidate): boolean {
    return !!this.outcomes.get(asker)?.has(c);
  }

  /**
   * What the passes make of candidate `c` of file `asker` (`decide`), kept: the same candidate
   * object is decided once for these files, and counts as asking again what it asked.
   */
  outcome(asker: number, c: Candidate, decide: (c: Candidate) => Candidate | undefined): Candidate | undefined {
    let decided = this.outcomes.get(asker);
    if (!decided) this.outcomes.set(asker, (decided = new WeakMap()));
    const known = decided.get(c);
    if (known) {
      const asked = this.asked.get(asker);
      for (const key of known.keys) asked?.add(key);
      return known.kept;
    }
    this.deciding = [];
    const kept = decide(c);
    decided.set(c, { kept, keys: this.deciding });
    this.deciding = undefined;
    return kept;
  }

  /** `c` capped at info with `note`, the same object for the same candidate and note. */
  cap(c: Candidate, note: string, make: () => Candidate): Candidate {
    let notes = this.capped.get(c);
    if (!notes) this.capped.set(c, (notes = new Map()));
    let made = notes.get(note);
    if (!made) notes.set(note, (made = make()));
    return made;
  }

  /**
   * The questions still asked, answered for the program's new files (the same paths, some texts
   * changed), and the asking files whose answers differ: their findings are stale.
   */
  renewed(files: readonly SourceFile[], launchers: readonly SourceFile[]): { questions: ProgramQuestions; changed: Set<number> } {
    const next = new ProgramQuestions(this.reader, files, launchers, this.capped);
    const changed = new Set<number>();
    // Only the names still asked about are batched (a name typed and gone is not looked up again).
    for (const keys of this.asked.values()) {
      for (const key of keys) {
        const { question } = this.answers.get(key)!;
        if (question.kind === 'grad' || question.kind === 'test') next.names.add(question.name);
      }
    }
    for (const [asker, keys] of this.asked) {
      const kept = new Set<string>();
      next.asked.set(asker, kept);
      for (const key of keys) {
        const before = this.answers.get(key)!;
        if (next.ask(key, before.question, asker) !== before.answer) changed.add(asker);
        kept.add(key);
      }
    }
    return { questions: next, changed };
  }

  /** The files that asked questions (indices in `files`). */
  askers(): number[] {
    return [...this.asked.keys()];
  }

  private ask(key: string, question: Question, asker: number): boolean {
    this.asked.get(asker)?.add(key);
    this.deciding?.push(key);
    let kept = this.answers.get(key);
    if (!kept) {
      this.reader.counts.questions++;
      this.answers.set(key, (kept = { question, answer: this.answer(question) }));
    }
    return kept.answer;
  }

  private answer(q: Question): boolean {
    const lookup = (name: string, first: number) => this.lookup(name, first);
    if (q.kind === 'grad') return runsOnlyWithoutGrad(q.name, q.file, lookup);
    if (q.kind === 'test') return reachedOnlyFromTests(q.name, q.file, lookup);
    if (q.kind === 'launch') {
      const word = new RegExp(`\\b${q.launch.kernel}\\s*\\[`);
      const values = this.launchers.filter((f) => !f.offPath && this.reader.mentions(f, word)).flatMap((f) => this.reader.launchSwitchValues(f, q.launch));
      return values.length > 0 && values.every((v) => v === 'off');
    }
    return this.seedsThrough(q.name);
  }

  /**
   * The uses of `name` in the training-path files that mention it, `first` first, parsed lazily: most
   * names are ruled out by a use next to their definition (a call from module level, a reference
   * passed on) before any other file is read.
   */
  private *lookup(name: string, first: number): Generator<FileUses> {
    const order = [first, ...this.files.keys()].filter((i, k) => k === 0 || i !== first);
    for (const i of order) if (!this.files[i]!.offPath && this.reader.mentionsWord(this.files[i]!, name)) yield { file: i, uses: this.reader.usesOf(this.files[i]!, name, this.names) };
  }

  /** Through the imported functions those call in turn, three files deep (setup -> default_setup's module -> ...). */
  private seedsThrough(name: string): boolean {
    const seen = new Set([name]);
    let level = [name];
    for (let depth = 0; depth < 3 && level.length; depth++) {
      const next: string[] = [];
      for (const n of level) {
        for (const found of this.definitionsOf(n)) {
          if (found.seeds) return true;
          for (const m of found.imported) if (!seen.has(m)) (seen.add(m), next.push(m));
        }
      }
      level = next;
    }
    return false;
  }

  private definitionsOf(name: string): FunctionSeeding[] {
    let found = this.definitions.get(name);
    if (!found) {
      const def = new RegExp(`^(async\\s+)?def\\s+${name}\\s*\\(`, 'm');
      this.definitions.set(name, (found = this.files.filter((f) => !f.offPath && this.reader.mentions(f, def)).map((f) => this.reader.functionSeedsTorch(f, name))));
    }
    return found;
  }
}
