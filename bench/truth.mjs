// `npm run bench:truth`: precision and recall of `bitexact check` on public repositories, against
// sites labelled by reading their code (bench/truth/README.md). Each labelled commit is
// materialised from a local mirror and checked whole, as a user runs `bitexact check .` there.
//
//   node bench/truth.mjs [--repo TEXT] [--failures] [--unlabelled] [--sample N] [--json FILE]
//                        [--unjudged-out FILE]   (the sample's unjudged warnings, for judging by hand)
//                        [--sample-out FILE]     (the whole sample with its verdicts)
//                        [--held-out-failures]   (also list held-out repositories' failing sites and
//                                                 unjudged warnings: hidden by default, so nobody tunes on them)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readDisputes, readLabelFiles, readSample, settled } from './truth-lib/labels.mjs';
import { materialise } from './truth-lib/materialise.mjs';
import { isLoud, precision, recall, score } from './truth-lib/score.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const truthDir = path.join(root, 'bench/truth');
const { values: opts } = parseArgs({
  options: {
    repo: { type: 'string' },
    failures: { type: 'boolean', default: false },
    unlabelled: { type: 'boolean', default: false },
    sample: { type: 'string', default: '100' },
    json: { type: 'string' },
    'unjudged-out': { type: 'string' },
    'sample-out': { type: 'string' },
    'held-out-failures': { type: 'boolean', default: false },
  },
});
const mirrors = process.env.BITEXACT_TRUTH_MIRRORS ?? '/work/.mirror';
const work = process.env.BITEXACT_TRUTH_WORK ?? path.join(os.tmpdir(), 'bitexact-truth');

const fmt = (x) => (x === null ? '  -  ' : x.toFixed(3));
const pad = (s, n) => String(s).padEnd(n);

function check(dir) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [process.env.BITEXACT_BIN ?? path.join(root, 'bin/bitexact.cjs'), 'check', '.', '--format', 'json'], {
    cwd: dir,
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  const seconds = (Date.now() - started) / 1000;
  if (r.status !== 0 && r.status !== 1) return { crash: `exit ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`, seconds };
  const report = JSON.parse(r.stdout);
  const findings = report.diagnostics.map((d) => ({ ...d, path: path.relative(dir, path.resolve(dir, d.path)).split(path.sep).join("/") }));
  const syntaxErrors = r.stderr.split('\n').filter((l) => l.includes('syntax error')).map((l) => l.replace(/^bitexact: note: /, '').replace(dir + '/', ''));
  return { findings, syntaxErrors, files: report.filesChecked, seconds };
}

const labelFiles = readLabelFiles(truthDir).filter((l) => !opts.repo || l.name.includes(opts.repo));
if (!labelFiles.length) {
  console.error(`no label files${opts.repo ? ` matching ${opts.repo}` : ''} in ${truthDir}`);
  process.exit(2);
}

const disputes = readDisputes(truthDir, labelFiles);
const results = [];
for (const labels of labelFiles) {
  const slug = labels.repo.replace('/', '+');
  const gitDir = path.join(mirrors, slug, 'repo');
  if (!fs.existsSync(gitDir)) {
    console.error(`${labels.name}: no mirror at ${gitDir} (fetch github:${labels.repo} with the search tool); skipped`);
    continue;
  }
  const dir = await materialise(gitDir, labels.commit, path.join(work, `${slug}@${labels.commit.slice(0, 12)}`));
  const run = check(dir);
  if (run.crash) {
    console.error(`${labels.name}: bitexact crashed (${run.crash})`);
    results.push({ labels, dir, crash: run.crash });
    continue;
  }
  results.push({ labels, dir, ...run, ...score(labels, run.findings), settledTotal: score(settled(labels, disputes), run.findings).total });
}

function sum(list) {
  const t = { tp: 0, fp: 0, fn: 0, pass: 0, sites: 0 };
  for (const r of list) for (const k of Object.keys(t)) t[k] += r.total?.[k] ?? 0;
  return t;
}

console.log(`${pad('label file', 46)} ${pad('sites', 5)} ${pad('TP', 4)} ${pad('FP', 4)} ${pad('FN', 4)} prec.  recall loud/files  s`);
for (const group of [false, true]) {
  const rows = results.filter((r) => r.labels.heldOut === group);
  if (!rows.length) continue;
  console.log(group ? '-- held out (never used for tuning)' : '-- tuned on');
  for (const r of rows) {
    if (r.crash) {
      console.log(`${pad(r.labels.name, 46)} CRASH ${r.crash}`);
      continue;
    }
    const t = r.total;
    const loud = r.findings.filter(isLoud).length;
    console.log(`${pad(r.labels.name, 46)} ${pad(t.sites, 5)} ${pad(t.tp, 4)} ${pad(t.fp, 4)} ${pad(t.fn, 4)} ${fmt(precision(t))}  ${fmt(recall(t))}  ${loud}/${r.files}  ${r.seconds.toFixed(1)}`);
  }
  const t = sum(rows);
  console.log(`${pad('   all', 46)} ${pad(t.sites, 5)} ${pad(t.tp, 4)} ${pad(t.fp, 4)} ${pad(t.fn, 4)} ${fmt(precision(t))}  ${fmt(recall(t))}`);
}
const all = sum(results);
console.log(`${pad('overall', 46)} ${pad(all.sites, 5)} ${pad(all.tp, 4)} ${pad(all.fp, 4)} ${pad(all.fn, 4)} ${fmt(precision(all))}  ${fmt(recall(all))}`);
if (disputes.size) {
  // The same findings scored with the disputed labels as their evidence says (bench/truth/disputes.json).
  const fixed = (list) => sum(list.map((r) => ({ total: r.settledTotal })));
  console.log(`with the ${disputes.size} disputed labels settled by their evidence:`);
  for (const [name, rows] of [['   tuned on', results.filter((r) => !r.labels.heldOut)], ['   held out', results.filter((r) => r.labels.heldOut)], ['   overall', results]]) {
    const t = fixed(rows);
    console.log(`${pad(name, 46)} ${pad(t.sites, 5)} ${pad(t.tp, 4)} ${pad(t.fp, 4)} ${pad(t.fn, 4)} ${fmt(precision(t))}  ${fmt(recall(t))}`);
  }
}

const perRule = new Map();
for (const r of results) {
  for (const [rule, t] of r.perRule ?? []) {
    const acc = perRule.get(rule) ?? { tp: 0, fp: 0, fn: 0 };
    for (const k of Object.keys(acc)) acc[k] += t[k];
    perRule.set(rule, acc);
  }
}
console.log('\nper rule (a miss counts against the rule that reported it below warning, else the label\'s rule)');
for (const [rule, t] of [...perRule].sort()) {
  console.log(`  ${pad(rule, 7)} TP ${pad(t.tp, 4)} FP ${pad(t.fp, 4)} FN ${pad(t.fn, 4)} prec. ${fmt(precision(t))} recall ${fmt(recall(t))}`);
}

const syntax = results.flatMap((r) => (r.syntaxErrors ?? []).map((s) => `${r.labels.name}: ${s}`));
console.log(`\nsyntax errors reported: ${syntax.length}${syntax.length ? '\n  ' + syntax.join('\n  ') : ''}`);
console.log(`crashes: ${results.filter((r) => r.crash).length}`);

const lineOf = (dir, file, line) => {
  try {
    return fs.readFileSync(path.join(dir, file), 'utf8').split('\n')[line - 1]?.trim().slice(0, 110) ?? '';
  } catch {
    return '';
  }
};
const shown = (r) => opts['held-out-failures'] || !r.labels.heldOut;
const hiddenNote = (what, n) => n && console.log(`  (${n} ${what} in held-out repositories hidden; --held-out-failures lists them)`);
if (opts.failures) {
  console.log('\nfailing sites');
  hiddenNote('failing sites', results.filter((r) => !shown(r)).reduce((n, r) => n + (r.failures?.length ?? 0), 0));
  for (const r of results.filter(shown)) {
    for (const f of r.failures ?? []) {
      const found = f.found.map((d) => `${d.rule} ${d.severity}`).join(', ') || 'nothing';
      console.log(`  ${f.kind === 'missed' ? 'MISS' : 'FALSE'} ${r.labels.name} ${f.site.path}:${f.site.line} [${f.site.label}/${f.site.context}] ${f.site.api} -> ${found}\n       label: ${f.site.why}\n       code:  ${lineOf(r.dir, f.site.path, f.site.line)}`);
    }
  }
}
if (opts.unlabelled) {
  console.log('\nwarnings on unlabelled lines of files read whole');
  hiddenNote('warnings', results.filter((r) => !shown(r)).reduce((n, r) => n + (r.unlabelled?.length ?? 0), 0));
  for (const r of results.filter(shown)) for (const d of r.unlabelled ?? []) console.log(`  ${r.labels.name} ${d.path}:${d.range.start.line} ${d.rule} ${d.severity}: ${lineOf(r.dir, d.path, d.range.start.line)}`);
}

// A seeded sample of every loud finding: the findings with the smallest seeded hashes of their keys
// (repository, commit, path, line, rule). A change that removes a finding only lets the next one in,
// so hand verdicts stay attached to the same findings from run to run.
const sampleFile = readSample(truthDir);
const keyOf = (r, d) => `${r.labels.repo}@${r.labels.commit}:${d.path}${d.cell ? `#${d.cell}` : ''}:${d.range.start.line}:${d.rule}`;
const judged = new Map(sampleFile.verdicts.map((v) => [`${v.repo}@${v.commit}:${v.path}${v.cell ? `#${v.cell}` : ''}:${v.line}:${v.rule}`, v]));
const hashOf = (text) => createHash('sha256').update(`${sampleFile.seed}\u0000${text}`).digest().readUInt32BE(0);
const loud = results
  .flatMap((r) => (r.findings ?? []).filter(isLoud).map((d) => ({ r, d, hash: hashOf(keyOf(r, d)) })))
  .sort((a, b) => a.hash - b.hash);
const sample = loud.slice(0, Number(opts.sample));
let real = 0;
let verdicts = 0;
const unjudged = [];
const sampleByRule = new Map();
for (const { r, d } of sample) {
  const v = judged.get(keyOf(r, d));
  if (v) {
    verdicts++;
    if (v.verdict === 'real') real++;
    const t = sampleByRule.get(d.rule) ?? { real: 0, false: 0 };
    t[v.verdict]++;
    sampleByRule.set(d.rule, t);
  } else unjudged.push({ r, d });
}
console.log(`\nsample of ${sample.length} of ${loud.length} warnings and errors (seed ${sampleFile.seed}): ${verdicts} judged, ${real} real (${verdicts ? ((100 * real) / verdicts).toFixed(0) : '-'} %)`);
console.log(`  by rule: ${[...sampleByRule].sort().map(([rule, t]) => `${rule} ${t.real}/${t.real + t.false}`).join(', ')}`);
hiddenNote('unjudged sample warnings', unjudged.filter(({ r }) => !shown(r)).length);
for (const { r, d } of unjudged.filter(({ r }) => shown(r))) {
  console.log(`  UNJUDGED ${r.labels.repo}@${r.labels.commit.slice(0, 7)} ${d.path}:${d.range.start.line} ${d.rule} ${d.severity}\n       ${d.message.slice(0, 160)}\n       code: ${lineOf(r.dir, d.path, d.range.start.line)}`);
}

if (opts['unjudged-out']) {
  const items = unjudged.map(({ r, d }) => ({ repo: r.labels.repo, commit: r.labels.commit, checkout: r.dir, path: d.path, ...(d.cell ? { cell: d.cell } : {}), line: d.range.start.line, rule: d.rule, severity: d.severity, message: d.message }));
  fs.writeFileSync(opts['unjudged-out'], JSON.stringify(items, null, 2) + '\n');
}

if (opts['sample-out']) {
  const items = sample.map(({ r, d }) => ({ repo: r.labels.repo, commit: r.labels.commit, path: d.path, ...(d.cell ? { cell: d.cell } : {}), line: d.range.start.line, rule: d.rule, severity: d.severity, verdict: judged.get(keyOf(r, d))?.verdict ?? null, why: judged.get(keyOf(r, d))?.why ?? null }));
  fs.writeFileSync(opts['sample-out'], JSON.stringify(items, null, 2) + '\n');
}

if (opts.json) {
  const out = results.map((r) => ({ file: r.labels.name, repo: r.labels.repo, commit: r.labels.commit, heldOut: r.labels.heldOut, crash: r.crash ?? null, total: r.total ?? null, perRule: Object.fromEntries(r.perRule ?? []), syntaxErrors: r.syntaxErrors ?? [] }));
  fs.writeFileSync(opts.json, JSON.stringify({ overall: all, results: out, sample: { size: sample.length, judged: verdicts, real } }, null, 2) + '\n');
}
