// Reads and validates bench/truth/*.json (format: bench/truth/README.md).
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const Site = z.strictObject({
  path: z.string().min(1),
  line: z.number().int().positive(),
  endLine: z.number().int().positive().optional(),
  api: z.string().min(1),
  label: z.enum(['flag', 'quiet', 'guarded']),
  context: z.enum(['train', 'test', 'bench', 'docs', 'build', 'stub']).default('train'),
  rules: z.array(z.string().regex(/^BX\d{3}$/)).optional(),
  why: z.string().min(1),
});

const LabelFile = z.strictObject({
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/),
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  kind: z.string().min(1),
  heldOut: z.boolean(),
  method: z.string().min(1),
  files: z.array(z.string()).default([]),
  sites: z.array(Site).min(1),
});

const Verdict = z.strictObject({
  repo: z.string(),
  commit: z.string(),
  path: z.string(),
  /** A notebook finding's cell (1-based, as bitexact's JSON gives it): its line is relative to the cell. */
  cell: z.number().int().positive().optional(),
  line: z.number().int().positive(),
  rule: z.string(),
  verdict: z.enum(['real', 'false']),
  why: z.string().min(1),
});
const SampleFile = z.strictObject({ seed: z.number().int(), verdicts: z.array(Verdict) });

/** A label that evidence contradicts: a measurement on the GPU or a fact of the code or its library. */
const Dispute = z.strictObject({
  file: z.string().regex(/\.json$/),
  path: z.string().min(1),
  line: z.number().int().positive(),
  label: z.enum(['flag', 'quiet', 'guarded']),
  evidence: z.enum(['measured', 'code', 'library']),
  source: z.string().min(1),
  why: z.string().min(1),
});
const DisputesFile = z.strictObject({ disputes: z.array(Dispute) });

function parse(schema, file) {
  let raw;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not JSON (${e.message})`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw new Error(`${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

/** Every label file in `dir`, in name order, each with its file name. */
export function readLabelFiles(dir) {
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json') && n !== 'sample.json' && n !== 'disputes.json')
    .sort()
    .map((name) => ({ name, ...parse(LabelFile, path.join(dir, name)) }));
}

/** The hand verdicts on the warning sample, or an empty list when none are kept yet. */
export function readSample(dir) {
  const file = path.join(dir, 'sample.json');
  return fs.existsSync(file) ? parse(SampleFile, file) : { seed: 1, verdicts: [] };
}

/**
 * The disputed labels (bench/truth/README.md), keyed `file:path:line`. Each must name a labelled site
 * whose label it changes: a dispute that matches nothing is an error, not a silent no-op.
 */
export function readDisputes(dir, labelFiles) {
  const file = path.join(dir, 'disputes.json');
  const disputes = fs.existsSync(file) ? parse(DisputesFile, file).disputes : [];
  const byKey = new Map();
  for (const d of disputes) {
    const labels = labelFiles.find((l) => l.name === d.file);
    const site = labels?.sites.find((s) => s.path === d.path && s.line === d.line);
    if (labels && !site) throw new Error(`${file}: ${d.file} has no site at ${d.path}:${d.line}`);
    if (site && site.label === d.label) throw new Error(`${file}: ${d.file} ${d.path}:${d.line} is already labelled ${d.label}`);
    byKey.set(`${d.file}:${d.path}:${d.line}`, d);
  }
  return byKey;
}

/** The label file with its disputed sites relabelled as the evidence says. */
export function settled(labels, disputes) {
  return { ...labels, sites: labels.sites.map((s) => {
    const d = disputes.get(`${labels.name}:${s.path}:${s.line}`);
    return d ? { ...s, label: d.label, why: `${d.why} (disputed: ${d.source})` } : s;
  }) };
}
