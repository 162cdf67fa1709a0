// Scores one repository's findings against its labelled sites (rules: bench/truth/README.md).

const LOUD = new Set(['warning', 'error']);

export const isLoud = (d) => LOUD.has(d.severity);

function tally(map, key) {
  let t = map.get(key);
  if (!t) map.set(key, (t = { tp: 0, fp: 0, fn: 0 }));
  return t;
}

/**
 * `findings`: bitexact's JSON diagnostics with paths relative to the checkout.
 * Returns totals, per-rule tallies, the failing sites, and loud findings on unlabelled lines of
 * the files read whole.
 */
export function score(labels, findings) {
  const byPath = new Map();
  for (const d of findings) {
    let list = byPath.get(d.path);
    if (!list) byPath.set(d.path, (list = []));
    list.push(d);
  }
  const total = { tp: 0, fp: 0, fn: 0, pass: 0, sites: labels.sites.length };
  const perRule = new Map();
  const failures = [];
  const covered = new Set();
  for (const site of labels.sites) {
    const last = site.endLine ?? site.line;
    const here = (byPath.get(site.path) ?? []).filter((d) => d.range.start.line >= site.line && d.range.start.line <= last);
    for (const d of here) covered.add(d);
    const loud = here.filter(isLoud);
    const wanted = site.label === 'flag' && site.context === 'train';
    if (wanted && loud.length) {
      total.tp++;
      total.pass++;
      tally(perRule, loud[0].rule).tp++;
    } else if (wanted) {
      total.fn++;
      const rule = here[0]?.rule ?? site.rules?.[0] ?? '(none)';
      tally(perRule, rule).fn++;
      failures.push({ site, kind: 'missed', found: here });
    } else if (loud.length) {
      total.fp++;
      tally(perRule, loud[0].rule).fp++;
      failures.push({ site, kind: 'false', found: loud });
    } else {
      total.pass++;
    }
  }
  const whole = new Set(labels.files);
  const unlabelled = findings.filter((d) => isLoud(d) && whole.has(d.path) && !covered.has(d));
  return { total, perRule, failures, unlabelled };
}

export const ratio = (a, b) => (b === 0 ? null : a / b);
export const precision = (t) => ratio(t.tp, t.tp + t.fp);
export const recall = (t) => ratio(t.tp, t.tp + t.fn);
