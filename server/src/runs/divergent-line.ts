// Where a probed pair's runs first part, as a place in the source: read from the pair's report.json
// (the engine's localisation, written by `bitexact pair --probe` or `bitexact compare DIR`), never
// worked out again. The ops re-run of the first divergent step (narrow/) names the op and its line;
// without it the pair's own modules traces name the module (and where its forward is defined).
//
// A pair may have run on another machine (a GPU host) and been copied here: the probe recorded
// absolute paths there. A path inside the directory the pair ran in (meta.json's cwd) is looked up
// relative to where that directory is here first (the pair directory sits in its .bitexact/runs/, or
// as deep as the report's relative log paths say), then as recorded.
//
// The call path: the modules around the divergent record, innermost first, each with the line its
// forward is defined at, from the pair's modules traces (probe-1/): the probe names a module by its
// named_modules() path (`blocks.0.moe`), so its enclosing modules are the dotted prefixes that
// recorded an output in that step; the root is named by its class and prefixes every parameter's name.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PAIR_META_READ } from './pair-meta.js';
import type { CallPathEntry, PairDivergence, SourcePlace } from './pair-divergence-wire.js';
import { readProbeTrace, TraceRecord } from './probe-trace.js';
import { parseReport, Report } from './report-schema.js';

const SOURCE = z.object({ path: z.string(), line: z.number() });
/** The fields of a localisation (probe-trace.ts Localisation) read here; report.json keeps it untyped. */
const LOCALISATION = z.object({
  rank: z.number(),
  firstToDiverge: z.boolean().optional(),
  divergence: z
    .object({
      step: z.number(),
      phase: z.string(),
      kind: z.string(),
      module: z.string(),
      op: z.string().optional(),
      sequence: z.number(),
      source: SOURCE.optional(),
    })
    .optional(),
});
type Localised = z.infer<typeof LOCALISATION> & { divergence: NonNullable<z.infer<typeof LOCALISATION>['divergence']> };

/** The rank that diverged first (or the first that diverged) of a report's localisation; none: every record matched. */
function firstDiverged(localisation: unknown): Localised | undefined {
  const parsed = z.array(LOCALISATION).safeParse(localisation);
  if (!parsed.success) return undefined;
  const diverged = parsed.data.filter((l): l is Localised => l.divergence !== undefined);
  return diverged.find((l) => l.firstToDiverge) ?? diverged[0];
}

/** Where a probed pair's runs first part, found on this machine; undefined when the pair has no probe traces that part. */
export function divergentLine(pairDir: string): Omit<PairDivergence, 'findings'> | undefined {
  const dir = path.resolve(pairDir);
  let report: Report;
  try {
    report = parseReport(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const narrowed = firstDiverged(report.narrow?.localisation);
  const own = firstDiverged(report.localisation);
  // The op's line when the ops re-run named one; else the pair's own (a module's forward).
  const chosen = narrowed?.divergence.source ? narrowed : (own ?? narrowed);
  if (!chosen) return undefined;
  const fromNarrow = chosen === narrowed;
  const d = chosen.divergence;
  const meta = readMeta(dir);
  const cwds = localCwds(dir, report, meta?.cwd);
  const find = (place: SourcePlace) => localPath(place.path, meta?.cwd, cwds);
  const runs: [string, string] = fromNarrow ? ['run 1', 'run 2'] : [report.runs[0]?.label ?? 'run 1', report.runs[1]?.label ?? 'run 2'];
  const found = d.source ? find(d.source) : undefined;
  const callPath = callPathOf(path.join(dir, 'probe-1', `rank_${chosen.rank}.jsonl`), d.module, d.step).map((entry): CallPathEntry => {
    const at = entry.source ? find(entry.source) : undefined;
    return { module: entry.module, ...(at ? { source: { path: at, line: entry.source!.line } } : {}) };
  });
  return {
    dir,
    id: path.basename(dir),
    rank: chosen.rank,
    step: d.step,
    phase: d.phase,
    kind: d.kind,
    module: d.module,
    ...(d.op !== undefined ? { op: d.op } : {}),
    runs,
    narrowed: fromNarrow,
    ...(d.source ? { recorded: d.source } : {}),
    ...(found ? { source: { path: found, line: d.source!.line } } : {}),
    callPath,
    message: divergenceMessage({ ...d, runs }),
  };
}

/** "first divergence: op aten.index_add_.default in module blocks.0.moe at step 1 (forward), run 1 vs run 2" */
export function divergenceMessage(d: { op?: string; kind: string; module: string; step: number; phase: string; runs: [string, string] }): string {
  const what = d.op !== undefined ? `op ${d.op}` : d.kind;
  const where = d.module ? ` in module ${d.module}` : '';
  return `first divergence: ${what}${where} at step ${d.step} (${d.phase}), ${d.runs[0]} vs ${d.runs[1]}`;
}

function readMeta(dir: string): { cwd?: string } | undefined {
  try {
    const parsed = PAIR_META_READ.safeParse(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the directory the pair ran in is on this machine, most likely first: above `.bitexact/runs/`
 * when the pair directory is in one; as deep as a relative log path of the report says
 * (`.bitexact/runs/<id>/run-1.log`: three folders up); the recorded one, when it is here.
 */
function localCwds(dir: string, report: Report, recorded: string | undefined): string[] {
  const out: string[] = [];
  const parent = path.dirname(dir);
  if (path.basename(parent) === 'runs' && path.basename(path.dirname(parent)) === '.bitexact') out.push(path.dirname(path.dirname(parent)));
  const log = report.runs[0]?.logPath;
  if (log && !path.isAbsolute(log)) {
    const logDir = path.normalize(path.dirname(log));
    if (!logDir.split(path.sep).includes('..') && dir.endsWith(`${path.sep}${logDir}`)) out.push(dir.slice(0, dir.length - logDir.length - 1));
  }
  if (recorded && fs.existsSync(recorded)) out.push(recorded);
  return [...new Set(out)];
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** A recorded source path found here: inside the recorded cwd, relative to each local one; else as recorded. */
function localPath(recorded: string, recordedCwd: string | undefined, cwds: readonly string[]): string | undefined {
  const rel = recordedCwd ? path.relative(recordedCwd, recorded) : undefined;
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) {
    for (const cwd of cwds) {
      const candidate = path.join(cwd, rel);
      if (isFile(candidate)) return candidate;
    }
  }
  return path.isAbsolute(recorded) && isFile(recorded) ? recorded : undefined;
}

/** The modules around `module` (itself first, the root last) that recorded an output in `step`, with their forward's recorded source. */
function callPathOf(trace: string, module: string, step: number): { module: string; source?: SourcePlace }[] {
  let records: TraceRecord[];
  try {
    records = fs.existsSync(trace) ? readProbeTrace(trace) : [];
  } catch {
    return [];
  }
  const outputs = new Map<string, TraceRecord>();
  for (const r of records) if (r.step === step && r.kind === 'module-output' && !outputs.has(r.module)) outputs.set(r.module, r);
  if (outputs.size === 0) return [];
  const parts = module.split('.');
  const names = parts.map((_, i) => parts.slice(0, parts.length - i).join('.')).filter((name) => outputs.has(name));
  // The root: the one name every parameter's name starts with (two models, two roots: which one
  // holds the module cannot be told from the names, so none is added).
  const roots = new Set(records.filter((r) => r.kind === 'param' || r.kind === 'param-grad').map((r) => r.module.split('.')[0]!));
  const [root] = roots;
  if (roots.size === 1 && root !== undefined && outputs.has(root) && !names.includes(root)) names.push(root);
  return names.map((name) => {
    const source = outputs.get(name)!.source;
    return { module: name, ...(source ? { source } : {}) };
  });
}
