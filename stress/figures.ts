// The stress suite's figures, printed at the end of each file (files swept, cases run, faults found).
export function printFigures(title: string, figures: Record<string, number | string>): void {
  const width = Math.max(...Object.keys(figures).map((k) => k.length));
  const lines = Object.entries(figures).map(([k, v]) => `  ${k.padEnd(width)}  ${typeof v === 'number' ? v.toLocaleString('en-US') : v}`);
  process.stdout.write(`\n${title}\n${lines.join('\n')}\n`);
}

/** A numeric option from the environment (STRESS_*), or its default. */
export function option(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}
