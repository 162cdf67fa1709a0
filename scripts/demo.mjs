// `npm run demo`: the main job on the bundled examples. Checks examples/ statically, then pairs the
// two toy trainers (one bitwise reproducible, one that diverges by thread completion order).
// Exits 0 when every step gives the result the examples are built to show.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'bin/bitexact.cjs');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-demo-'));
const steps = [
  { title: 'Static check of examples/', args: ['check', 'examples/'], expect: 1 },
  { title: 'Paired runs of a deterministic toy trainer', args: ['pair', '--runs', '2', '--out', out, '--', 'python3', 'examples/toy_runs/deterministic_trainer.py'], expect: 0 },
  { title: 'Paired runs of a trainer that sums gradients in completion order', args: ['pair', '--runs', '2', '--out', out, '--', 'python3', 'examples/toy_runs/completion_order_trainer.py'], expect: 1 },
];
let ok = true;
for (const step of steps) {
  const shown = step.args.filter((a, i) => a !== out && step.args[i + 1] !== out);
  console.log(`\n=== ${step.title}: bitexact ${shown.join(' ')}\n`);
  const result = spawnSync(process.execPath, [cli, ...step.args], { cwd: root, stdio: 'inherit' });
  if (result.status !== step.expect) {
    console.log(`\n(unexpected exit status ${result.status}; expected ${step.expect})`);
    ok = false;
  }
}
console.log(`\nRun logs of the pairs: ${out}`);
process.exit(ok ? 0 : 1);
