// Two training logs of JSON Lines for the compare bench: `steps` lines of 20 metrics each, written as
// Python's json.dumps writes float32 values (shortest round-trip text). The second run's grad norm is
// one float32 ULP off from 60 % of the steps on, its loss from the step after: compare must find it.
import fs from 'node:fs';
import path from 'node:path';

const METRICS = ['loss', 'grad_norm', 'lr', 'loss_scale', 'params_norm', 'num_zeros', 'ppl', 'acc', 'z_loss', 'aux_loss', 'moe/load_balance', 'mtp_loss', 'logits_max', 'logits_mean', 'act_norm', 'update_norm', 'wd_term', 'tokens_seen', 'step_time', 'mfu'];

/** A fixed sequence in [0, 1) (xorshift32), so every machine writes the same logs. */
function sequence(seed) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const f32 = (x) => Math.fround(x);
function nextUlp(x) {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  view.setUint32(0, view.getUint32(0) + 1);
  return view.getFloat32(0);
}

function writeLog(file, steps, diverge) {
  const next = sequence(2463534242);
  const fd = fs.openSync(file, 'w');
  let chunk = '';
  for (let step = 1; step <= steps; step++) {
    const fields = [`"step": ${step}`];
    METRICS.forEach((name, m) => {
      let v = f32((2 + m) * Math.exp(-step / (steps / 2)) + 0.01 * next() + 0.05);
      if (name === 'tokens_seen') v = step * 4096;
      if (name === 'num_zeros') v = Math.floor(next() * 1000);
      if (diverge && ((name === 'grad_norm' && step >= 0.6 * steps) || (name === 'loss' && step > 0.6 * steps))) v = nextUlp(v);
      fields.push(`"${name}": ${v}`);
    });
    chunk += `{${fields.join(', ')}}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

/** The two logs in dir (written once per size), as [a, b]. */
export function runLogs(dir, steps) {
  const files = ['a', 'b'].map((k) => path.join(dir, `${k}-${steps}.jsonl`));
  if (!files.every((f) => fs.existsSync(f))) {
    fs.mkdirSync(dir, { recursive: true });
    files.forEach((f, k) => writeLog(f, steps, k === 1));
  }
  return files;
}

export const METRIC_COUNT = METRICS.length;
