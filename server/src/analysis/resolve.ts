// Candidates → findings: pick each hit's outcome for the program's deterministic mode and its guard,
// apply rule selection and severity overrides, honour suppressions and report the ones that are
// unknown or unused, and offer a suppression fix on every finding.
import { ALL_NAMES } from './compiled-program.js';
import { isRuleEnabled, Settings } from './config.js';
import type { Candidate, FileAnalysis } from './engine.js';
import type { ModeOutcome, Rule } from './rules/rule.js';
import type { Suppression } from './suppressions.js';
import { DeterministicMode, Finding, Fix, SEVERITY_RANK, compareRanges } from './types.js';

export const UNKNOWN_SUPPRESSION = 'BX001';
export const UNUSED_SUPPRESSION = 'BX002';

export interface ResolveOptions {
  settings: Settings;
  mode: DeterministicMode;
  /** Another file of the program trains (program.ts programTrains). */
  programTrains: boolean;
  /** The file's top-level names a whole-model compile of the program builds (program.ts ProgramFile.compiled). */
  compiled?: ReadonlySet<string>;
  /** No file of the program seeds torch (program.ts programUnseeded); false where not known. */
  programUnseeded?: boolean;
  rules: ReadonlyMap<string, Rule>;
  /** A test, benchmark, docs or build file: `settings.testCode` decides how it is reported. */
  offPath: boolean;
}

/**
 * What resolveFindings keeps of one document between analyses (the language server keeps one per
 * open document): the finding made of each candidate. A candidate that is the same object as last
 * time (its function unchanged: the chunk cache hands back the same result, chunk-cache.ts), in the
 * same settings, mode and role, on the same line text (the suppression fix reads it), gives the same
 * Finding object, so the server converts and compares only the findings that did change.
 */
export class ResolveMemo {
  /** Findings made afresh rather than taken from the memo (work done; tests count it). */
  made = 0;
  private context = '';
  private kept = new Map<Candidate, { line: string; finding: Finding }>();
  private next = new Map<Candidate, { line: string; finding: Finding }>();

  /** Starts one resolve; a context other than the last one's drops every kept finding. */
  begin(context: string): void {
    if (context !== this.context) this.kept.clear();
    this.context = context;
    this.next = new Map();
  }

  get(candidate: Candidate, line: string): Finding | undefined {
    const kept = this.kept.get(candidate);
    if (kept?.line !== line) return undefined;
    this.next.set(candidate, kept);
    return kept.finding;
  }

  set(candidate: Candidate, line: string, finding: Finding): void {
    this.made++;
    this.next.set(candidate, { line, finding });
  }

  /** Ends one resolve: only the candidates it saw are kept. */
  end(): void {
    this.kept = this.next;
    this.next = new Map();
  }
}

// Notes on where a hit sits go to the finding's detail: the message stays one short sentence.
const OFF_PATH_NOTE = 'Off the CUDA training path (test, benchmark, docs, build or other-device code), so reported as info; `test-code = "report"` in `[tool.bitexact]` reports it in full.';
const GUARD_NOTE = {
  'default-branch': 'Guarded: this branch runs only when determinism is off, and the code already has a deterministic path.',
  'deterministic-branch': 'On the deterministic path of a determinism guard, where it still breaks determinism.',
};

/** Paragraphs of a detail, in order; absent when none has anything to say. */
export function joinDetail(...parts: Array<string | undefined>): string | undefined {
  const kept = parts.filter((p): p is string => !!p);
  return kept.length ? kept.join('\n\n') : undefined;
}

export function resolveFindings(analysis: FileAnalysis, text: string, options: ResolveOptions, memo?: ResolveMemo): Finding[] {
  const { settings, rules } = options;
  if (options.offPath && settings.testCode === 'skip') return [];
  // Everything a finding depends on besides its candidate and line (`rules` is fixed per Checker).
  memo?.begin(JSON.stringify([settings, options.mode, options.programTrains, options.programUnseeded === true, options.offPath]));
  const capped = options.offPath && settings.testCode === 'info';
  const lines = text.split('\n');
  const used = new Set<Suppression>();
  const findings: Finding[] = [];
  for (const candidate of analysis.candidates) {
    if (!isRuleEnabled(candidate.rule.id, settings)) continue;
    // A suppression over a hit counts as used even when the hit is silent in this mode: the same
    // code checked with the mode off (or guarded differently) would report it.
    const suppression = analysis.suppressions.find((s) => covers(s, candidate.rule.id, candidate.range.start.line));
    if (suppression) {
      used.add(suppression);
      continue;
    }
    const line = lines[candidate.range.start.line] ?? '';
    const kept = memo?.get(candidate, line);
    if (kept) {
      findings.push(kept);
      continue;
    }
    const outcome = pickOutcome(candidate, options.mode, options.programTrains, options.programUnseeded === true, options.compiled);
    if (!outcome) continue;
    const override = settings.severity[candidate.rule.id];
    const severity = override && override !== 'off' ? override : outcome.severity;
    const loud = capped && SEVERITY_RANK[severity] > SEVERITY_RANK.info;
    const detail = joinDetail(outcome.detail, loud ? OFF_PATH_NOTE : undefined);
    const finding: Finding = {
      rule: candidate.rule.id,
      name: candidate.rule.name,
      severity: loud ? 'info' : severity,
      message: outcome.message,
      ...(detail ? { detail } : {}),
      range: candidate.range,
      guard: candidate.guard,
      ...(candidate.guardCondition ? { guardCondition: candidate.guardCondition } : {}),
      fixes: [...candidate.fixes, ...(outcome.fixes ?? []), suppressionFix(candidate.rule.id, line, candidate.range.start.line)],
    };
    memo?.set(candidate, line, finding);
    findings.push(finding);
  }
  memo?.end();
  for (const suppression of analysis.suppressions) {
    for (const id of suppression.ids) {
      if (!rules.has(id)) {
        pushMeta(findings, rules, settings, UNKNOWN_SUPPRESSION, suppression, `\`${id}\` is not a bitexact rule, so this suppression does nothing`, '`bitexact rules` lists the rule ids.');
      }
    }
    const checkable = suppression.ids.length === 0 || suppression.ids.some((id) => rules.has(id) && isRuleEnabled(id, settings));
    if (!used.has(suppression) && checkable && suppression.ids.every((id) => rules.has(id))) {
      const what = suppression.ids.length ? suppression.ids.join(', ') : 'any rule';
      pushMeta(findings, rules, settings, UNUSED_SUPPRESSION, suppression, `Unused suppression: nothing from ${what} is reported ${suppression.kind === 'file' ? 'in this file' : 'here'}`, 'Remove the comment (the quick fix does).');
    }
  }
  return findings.sort((a, b) => compareRanges(a.range, b.range) || a.rule.localeCompare(b.rule));
}

function pickOutcome(candidate: Candidate, mode: DeterministicMode, programTrains: boolean, programUnseeded: boolean, compiled: ReadonlySet<string> | undefined): ModeOutcome | undefined {
  const outcomeIn = (m: DeterministicMode): ModeOutcome | undefined => {
    const outcome = candidate.outcomes[m];
    if (outcome?.onlyWhenProgramUnseeded && !programUnseeded) return undefined;
    if (outcome?.onlyWhenCompiled !== undefined && !(compiled?.has(ALL_NAMES) || compiled?.has(outcome.onlyWhenCompiled))) return undefined;
    if (programUnseeded && outcome?.whenProgramUnseeded) return { ...outcome, ...outcome.whenProgramUnseeded };
    return programTrains && outcome?.whenProgramTrains ? { ...outcome, ...outcome.whenProgramTrains } : outcome;
  };
  switch (candidate.guard) {
    case 'none':
      return outcomeIn(mode);
    case 'default-branch': {
      // The else of a determinism guard only runs when determinism is off, and the code already
      // has a deterministic path: at most info.
      const outcome = outcomeIn('off');
      if (!outcome) return undefined;
      const severity = SEVERITY_RANK[outcome.severity] > SEVERITY_RANK.info ? 'info' : outcome.severity;
      return { ...outcome, severity, detail: joinDetail(outcome.detail, GUARD_NOTE['default-branch']) };
    }
    case 'deterministic-branch': {
      // Only what breaks deterministic runs matters here: raising, or staying nondeterministic.
      const outcome = outcomeIn('on');
      return outcome?.severity === 'error' ? { ...outcome, detail: joinDetail(outcome.detail, GUARD_NOTE['deterministic-branch']) } : undefined;
    }
  }
}

function covers(s: Suppression, id: string, line: number): boolean {
  if (s.ids.length > 0 && !s.ids.includes(id)) return false;
  return s.kind === 'file' || s.lines.includes(line);
}

function pushMeta(findings: Finding[], rules: ReadonlyMap<string, Rule>, settings: Settings, id: string, s: Suppression, message: string, detail: string): void {
  const rule = rules.get(id);
  if (!rule || !isRuleEnabled(id, settings)) return;
  const severity = settings.severity[id];
  findings.push({
    rule: id,
    name: rule.name,
    severity: severity && severity !== 'off' ? severity : rule.defaultSeverity,
    message,
    detail,
    range: s.range,
    guard: 'none',
    fixes: [{ title: 'Remove the suppression comment', safety: 'safe', edits: [{ range: s.range, newText: '' }] }],
  });
}

/** Appends the id to an existing `# bitexact: ignore[...]` on the line, or adds a new comment. */
function suppressionFix(id: string, lineText: string, line: number): Fix {
  const text = lineText.replace(/\r$/, '');
  const existing = /#\s*bitexact:\s*ignore\[([^\]]*)\]/.exec(text);
  if (existing) {
    const column = existing.index + existing[0].length - 1;
    return {
      title: `Suppress ${id} on this line`,
      safety: 'safe',
      isSuppression: true,
      edits: [{ range: { start: { line, column }, end: { line, column } }, newText: `, ${id}` }],
    };
  }
  const end = { line, column: text.length };
  return {
    title: `Suppress ${id} on this line`,
    safety: 'safe',
    isSuppression: true,
    edits: [{ range: { start: end, end }, newText: `  # bitexact: ignore[${id}]` }],
  };
}
