// The seeded fuzz campaign (issue 10): the analyser, the log readers and the LSP framing, each fed
// generated and mutated input under fast-check with a fixed seed (STRESS_SEED) and STRESS_RUNS cases
// a target. A fault is an exception, a broken invariant or, for the framing, a well-framed message
// lost after garbage. Figures: cases run and faults found per target.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_FORMATS, readLogText } from '../server/src/runs/formats/detect.js';
import { FramingGuard } from '../server/src/lsp/framing.js';
import { SCALING_CASES } from '../bench/scaling-cases.mjs';
import { check } from '../test/support/checker.js';
import { option, printFigures } from './figures.js';

const SEED = option('STRESS_SEED', 10);
const RUNS = option('STRESS_RUNS', 2000);
const figures: Record<string, number> = {};

/** Runs `property` RUNS times; returns the faults (counterexamples) found, after shrinking. */
async function campaign<T>(name: string, arbitrary: fc.Arbitrary<T>, property: (value: T) => Promise<void> | void): Promise<void> {
  let cases = 0;
  const result = await fc.check(
    fc.asyncProperty(arbitrary, async (value) => {
      cases++;
      await property(value);
    }),
    { numRuns: RUNS, seed: SEED },
  );
  figures[`${name}: cases`] = cases;
  figures[`${name}: faults`] = result.failed ? 1 : 0;
  if (result.failed) process.stdout.write(`  fault in ${name}: ${fc.stringify(result.counterexample)}\n  ${String(result.errorInstance).slice(0, 500)}\n`);
  expect(result.failed).toBe(false);
}

/** Fragments of PyTorch training code; programs are sequences of them, indented and mutated. */
const FRAGMENTS = [
  'import torch', 'import torch.nn.functional as F', 'from torch import nn', 'x = torch.zeros(8)', 'idx = torch.randint(0, 8, (4,))',
  'x.index_add_(0, idx, torch.ones(4))', 'out.scatter_add_(0, idx, src)', 'torch.backends.cudnn.benchmark = True',
  'torch.use_deterministic_algorithms(True)', 'def forward(self, x, idx):', 'class M(nn.Module):', 'if cfg.deterministic:', 'else:',
  'return F.interpolate(x, scale_factor=2, mode="bilinear")', 'with torch.no_grad():', 'for f in os.listdir(d):', 'y = x[idx] + 1',
  'torch.manual_seed(0)', 'if __name__ == "__main__":', '@triton.jit', 'tl.atomic_add(ptr + offs, val)', 'a, b = b, a',
  'lambda t: t.sum()', 'y = (((x)))', '"""doc"""', '# bitexact: ignore[BX101]', 'x += y.float()', 'pass', 'try:', 'except ImportError:',
];

const program = fc
  .array(fc.tuple(fc.constantFrom(...FRAGMENTS), fc.integer({ min: 0, max: 3 })), { maxLength: 40 })
  .map((lines) => lines.map(([text, depth]) => `${'    '.repeat(depth)}${text}`).join('\n'));

/** A text with random damage: characters deleted, inserted or replaced at random places. */
const damaged = (base: fc.Arbitrary<string>) =>
  fc.tuple(base, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.string({ maxLength: 4 })), { maxLength: 6 })).map(([text, edits]) => {
    let t = text;
    for (const [at, cut, insert] of edits) {
      const i = t.length ? at % t.length : 0;
      t = t.slice(0, i) + insert + t.slice(i + cut);
    }
    return t;
  });

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('stress: fuzz', () => {
  it('the analyser never throws, on programs and damaged programs', async () => {
    const scaled = fc.constantFrom(...Object.values(SCALING_CASES)).map((make) => make(1));
    await campaign('analyser', fc.oneof(program, damaged(program), damaged(scaled)), async (text) => {
      const findings = await check(text);
      for (const f of findings) expect(f.range.start.line).toBeGreaterThanOrEqual(0);
    });
  });

  it('the log readers never throw, and keep their invariants', async () => {
    const line = fc.oneof(
      fc.record({ step: fc.integer({ min: -2, max: 50 }), loss: fc.double() }).map((r) => JSON.stringify(r)),
      fc.tuple(fc.integer({ min: 0, max: 50 }), fc.double()).map(([s, l]) => ` iteration ${s}/ 100 | lm loss: ${l} |`),
      fc.tuple(fc.integer({ min: 0, max: 50 }), fc.double()).map(([s, l]) => `step: ${s} loss: ${l}`),
      fc.string({ maxLength: 40 }),
    );
    const log = damaged(fc.array(line, { maxLength: 30 }).map((ls) => ls.join('\n')));
    await campaign('log readers', fc.tuple(log, fc.constantFrom(...LOG_FORMATS.filter((f) => f !== 'tfevents'))), ([text, format]) => {
      const parsed = readLogText(text, format);
      for (const s of parsed.series) {
        expect(s.values.length).toBe(s.steps.length);
        for (let i = 1; i < s.steps.length; i++) expect(s.steps[i]!).toBeGreaterThanOrEqual(s.steps[i - 1]!);
      }
    });
  });

  it('the LSP framing guard never throws, and every well-framed message after garbage gets through', async () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constant('Content-Length: -5\r\n\r\n'),
      fc.constant('Content-Type: x\r\n\r\n{}'),
      fc.constant('junk line\r\n\r\n'),
      // Not a number: a garbage header with a valid length is a frame like any other, and the bytes it
      // claims are taken from the next message (framing cannot tell; the JSON reader reports it).
      fc.string({ maxLength: 10 }).map((s) => `Content-Length: x${s}\r\n\r\n`),
    );
    const traffic = fc.array(fc.tuple(garbage, fc.integer({ min: 0, max: 1000 })), { minLength: 1, maxLength: 8 });
    await campaign('LSP framing', fc.tuple(traffic, fc.array(fc.nat(), { maxLength: 10 })), ([parts, cuts]) => {
      const bodies = parts.map(([, id]) => JSON.stringify({ jsonrpc: '2.0', id, method: 'shutdown' }));
      const bytes = Buffer.from(parts.map(([junk], i) => junk + frame(bodies[i]!)).join(''));
      const guard = new FramingGuard(() => undefined);
      const out: Buffer[] = [];
      guard.on('data', (d: Buffer) => out.push(d));
      let at = 0;
      for (const cut of [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b)) {
        guard.write(bytes.subarray(at, cut));
        at = cut;
      }
      guard.write(bytes.subarray(at));
      // Garbage may itself hold a valid-looking frame; what matters is that every real message arrives.
      const text = Buffer.concat(out).toString();
      for (const body of bodies) expect(text).toContain(frame(body));
    });
  });

  it('prints the figures', () => {
    printFigures(`Fuzz campaign (seed ${SEED}, ${RUNS} cases a target)`, figures);
  });
});
