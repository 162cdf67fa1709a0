// A whole `bitexact pair --probe modules --probe-steps 1-2` run on an H200 (test/fixtures/runs/
// pair-probe-h200, see its README): the pair directory bitexact itself wrote there, with the modules
// traces, the automatic ops re-run of the first divergent step (narrow/) and the unprobed re-run
// (observer/). Every logged scalar of its three steps is bitwise while the combine's outputs already
// differ at step 1, so the pair is judged `differs` inside; its fixed twin (pair-with-fix-h200, the
// BX101 fix applied in a copy) matches on every record of its traces.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localiseDirectories } from '../../server/src/runs/probe-trace.js';
import { judge, withInsideDivergence } from '../../server/src/runs/verdict.js';
import { compareRuns } from '../../server/src/runs/compare.js';
import { readLogText } from '../../server/src/runs/formats/detect.js';
import { ROOT } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const PAIR = path.join(ROOT, 'test/fixtures/runs/pair-probe-h200');
const FIXED = path.join(ROOT, 'test/fixtures/runs/pair-with-fix-h200');

describe('a probed pair recorded end to end on an H200', () => {
  it('is judged DIFFERS inside, with bitwise logs, by compare of its directory', () => {
    const result = runCli(['compare', PAIR, '--format', 'json'], ROOT);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.verdict).toBe('differs');
    expect(report.headline).toBe('DIFFERS inside from step 1 (forward, blocks.0.moe); the logged metrics stay bitwise');
    expect(report.metrics.filter((m: { timing?: boolean }) => !m.timing).map((m: { name: string; verdict: string }) => `${m.name} ${m.verdict}`).sort()).toEqual(['grad_norm bitwise', 'loss bitwise']);
    // Its narrow/ (the ops re-run of step 1) is localised again too, as the pair's own report had it.
    const recorded = JSON.parse(fs.readFileSync(path.join(PAIR, 'report.json'), 'utf8'));
    expect(report.narrow).toEqual({ ...recorded.narrow, dir: path.join(PAIR, 'narrow') });
    const text = runCli(['compare', PAIR], ROOT).stdout;
    expect(text).toMatch(/narrowed: step 1 re-run twice with the ops probe .*\n {2}first divergence: step 1 forward, blocks\.0\.moe aten\.index_add_\.default: op-output \[\S+train\.py:41\]/);
  });

  it('its automatic narrowing names the combine index_add_ line of the MoE example', () => {
    const [rank0] = localiseDirectories(path.join(PAIR, 'narrow/probe-1'), path.join(PAIR, 'narrow/probe-2'));
    expect(rank0!.divergence).toMatchObject({ step: 1, phase: 'forward', module: 'blocks.0.moe', op: 'aten.index_add_.default' });
    expect(rank0!.divergence!.source!.path.endsWith('examples/torch_moe/train.py')).toBe(true);
    expect(rank0!.divergence!.source!.line).toBe(41);
    expect(rank0!.lastMatch).toMatchObject({ op: 'aten.cat.default', module: 'blocks.0.moe' });
  });

  it('without the probe (observer/) the runs log the same bits, so the probe did not make the difference', () => {
    const result = runCli(['compare', path.join(PAIR, 'observer')], ROOT);
    expect(result.stdout.split('\n')[0]).toMatch(/^BITWISE IDENTICAL: 2 metrics over 3 steps/);
  });

  it('the pair with the BX101 fix applied matches inside too: every record of its traces', () => {
    const result = runCli(['compare', FIXED, '--format', 'json'], ROOT);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.headline).toBe('BITWISE IDENTICAL: 2 metrics over 3 steps');
    expect(report.localisation).toEqual([expect.objectContaining({ rank: 0, compared: 162, matchStrength: 'digest' })]);
    expect(report.localisation[0].divergence).toBeUndefined();
  });
});

describe('withInsideDivergence', () => {
  const log = () => readLogText('{"step": 1, "loss": 0.5}\n{"step": 2, "loss": 0.25}\n', 'jsonl');
  const bitwise = judge(compareRuns([{ label: 'run 1', log: log() }, { label: 'run 2', log: log() }]));

  it('turns agreeing logs into differs when the traces part, and leaves them when they do not', () => {
    expect(bitwise.verdict).toBe('bitwise');
    expect(withInsideDivergence(bitwise, undefined)).toEqual(bitwise);
    expect(withInsideDivergence(bitwise, { step: 2, where: 'backward, layer.1' })).toMatchObject({ verdict: 'differs', exitCode: 1, headline: 'DIFFERS inside from step 2 (backward, layer.1); the logged metrics stay bitwise' });
  });
});
