// The Runs view's model of running pairs (client/src/live-pairs.ts), fed the events of real pair
// sessions (real python3 runs of the toy fixtures) in the order the server forwards them, and the
// ad-hoc pair defaults (client/src/pair-settings.ts) checked by the server's own request parser.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LivePairs, currentRun, phaseText, runText, shortNumber, statusText } from '../../client/src/live-pairs.js';
import { PAIR_SETTING_DESCRIPTORS, adHocRequest, readPairDefaults } from '../../client/src/pair-settings.js';
import type { PairEvent, PairRunParams } from '../../server/src/runs/pair-events.js';
import { parsePairRunParams, resolvePair } from '../../server/src/runs/pair-request.js';
import { runPairSession } from '../../server/src/runs/pair-session.js';
import { PairWatcher } from '../../server/src/runs/pair-watch.js';
import { REPORT } from '../../server/src/runs/report-schema.js';
import { ROOT } from '../support/checker.js';

const SLOW = path.join(ROOT, 'test/fixtures/runs/slow_steps.py');

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-live-'));
}

/** A real session whose events go through the model as the server forwards them (no `output`), with what the row said after each. */
async function watched(params: PairRunParams, during?: (model: LivePairs, event: PairEvent) => void) {
  const model = new LivePairs();
  model.start(params, params.command!.join(' '));
  const seen: { phase: string; status: string | undefined }[] = [{ phase: phaseText(model.get(params.id)!), status: statusText(model.active()) }];
  const controller = new AbortController();
  const { id, settings } = parsePairRunParams(params);
  const result = await runPairSession({
    ...resolvePair(settings),
    signal: controller.signal,
    onEvent: (event) => {
      if (event.kind === 'output') return;
      model.apply({ id, event });
      seen.push({ phase: phaseText(model.get(id)!), status: statusText(model.active()) });
      during?.(model, event);
      if (model.get(id)!.state === 'cancelling') controller.abort();
    },
  });
  model.settle(id, { result: { exitCode: result.exitCode, dir: result.dir ?? null, verdict: result.report?.verdict ?? null, headline: result.report?.headline ?? null } });
  return { model, pair: model.get(id)!, seen, result };
}

describe('the live pairs model', () => {
  it('follows a real pair with variants: run k of N with its variant, step and last value, then the engine\'s verdict from report.json', async () => {
    const dir = scratch();
    const { model, pair, seen, result } = await watched({ id: 'p', cwd: dir, command: ['python3', SLOW, '4', '0.1'], variants: ['default', 'b:TOY=1'], out: path.join(dir, 'runs') });
    const phases = seen.map((s) => s.phase);
    expect(phases[0]).toBe('starting…');
    for (const [k, variant] of [[1, 'default'], [2, 'default'], [3, 'b'], [4, 'b']] as const) {
      expect(phases.some((p) => new RegExp(`^run ${k} of 4 · ${variant} · step [1-4] · loss [\\d.]+$`).test(p)), `${k}: ${phases.join(' | ')}`).toBe(true);
    }
    // The phases come in the runs' order, comparing after the last run.
    const order = phases.map((p) => /^run (\d)/.exec(p)?.[1]).filter(Boolean).map(Number);
    expect(order).toEqual([...order].sort());
    expect(phases).toContain('comparing the runs…');
    expect(seen.find((s) => s.phase.startsWith('run 3 of 4 · b · step'))!.status).toMatch(/^bitexact: run 3\/4 · step [1-4]$/);
    // Over: the row says what report.json says, nothing of its own.
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(result.dir!, 'report.json'), 'utf8')));
    expect(pair).toMatchObject({ state: 'done', verdict: report.verdict, headline: report.headline, dir: result.dir });
    expect(phaseText(pair)).toBe(report.headline);
    expect(model.active()).toEqual([]);
    expect(statusText(model.active())).toBeUndefined();
    expect(model.writesIn(result.dir!)).toBe(false);
    // Each run's row: how it ended; its last values are the log's, bit for bit.
    expect(pair.runs.map((r) => [r.run, r.variant, r.steps, r.lastStep])).toEqual([1, 2, 3, 4].map((k) => [k, k <= 2 ? 'default' : 'b', 4, 4]));
    for (const run of pair.runs) {
      expect(runText(run)).toMatch(/^ended · 4 steps · [\d.]+ s$/);
      const last = JSON.parse(fs.readFileSync(run.log, 'utf8').trim().split('\n').at(-1)!);
      expect(run.last).toEqual({ loss: last.loss });
    }
    // Events after the end, and of pairs this window did not launch, change nothing.
    expect(model.apply({ id: 'p', event: { kind: 'message', level: 'error', text: 'late' } })).toBeUndefined();
    expect(model.apply({ id: 'p', event: { kind: 'run-started', run: 1, total: 2, log: path.join(dir, 'x.log') } })).toBeUndefined();
    expect(model.apply({ id: 'other', event: { kind: 'comparing', dir } })).toBeUndefined();
    expect([pair.state, pair.error, pair.runs.length]).toEqual(['done', undefined, 4]);
    // Shown beside the pairs on disk until its report is listed there, then forgotten.
    expect(model.besideListed([path.join(dir, 'runs', 'other')]).map((p) => p.id)).toEqual(['p']);
    expect(model.besideListed([`${result.dir}/`])).toEqual([]);
    expect(model.get('p')).toBeUndefined();
  }, 60_000);

  it('a pair cancelled during run 1: cancelling…, then the engine\'s cancelled verdict; while it ran its folder was off limits', async () => {
    const dir = scratch();
    let runningDir: string | undefined;
    let heldWhileRunning = false;
    const { pair, seen } = await watched({ id: 'c', cwd: dir, command: ['python3', SLOW, '200', '0.05'], out: path.join(dir, 'runs') }, (model, event) => {
      const live = model.get('c')!;
      if (event.kind === 'run-progress' && live.state === 'running' && (currentRun(live)?.steps ?? 0) >= 2) {
        runningDir = live.dir;
        heldWhileRunning = model.writesIn(live.dir!);
        model.cancelling('c');
      }
    });
    expect(heldWhileRunning).toBe(true);
    expect(seen.map((s) => s.phase)).toContain('cancelling…');
    expect(seen.find((s) => s.phase === 'cancelling…')!.status).toBe('bitexact: cancelling…');
    expect(pair).toMatchObject({ state: 'done', verdict: 'cancelled', dir: runningDir });
    expect(pair.headline).toMatch(/^CANCELLED during run 1 of 2/);
    expect(runText(pair.runs[0]!)).toMatch(/^cancelled · \d+ steps · [\d.]+ s$/);
    expect(pair.runs).toHaveLength(1);
  }, 60_000);

  it('a followed pair whose stop could not be sent goes on as it was; one that could, ends as its engine says', () => {
    const model = new LivePairs();
    const watched = { dir: '/w/.bitexact/runs/p1', title: 'python3 train.py', command: ['python3', 'train.py'], cwd: '/w' };
    model.apply({ id: 'watched:/w/.bitexact/runs/p1', watched, event: { kind: 'run-started', run: 1, total: 2, log: '/w/.bitexact/runs/p1/run-1.log' } });
    model.apply({ id: 'watched:/w/.bitexact/runs/p1', watched, event: { kind: 'message', level: 'warning', text: 'meta.json could not be written; the runs go on' } });
    const pair = model.cancelling('watched:/w/.bitexact/runs/p1')!;
    expect([pair.state, phaseText(pair)]).toEqual(['cancelling', 'cancelling…']);
    expect(model.resumed('watched:/w/.bitexact/runs/p1')!.state).toBe('running');
    expect(pair.messages).toEqual(['meta.json could not be written; the runs go on']);
    // Resumed only from cancelling: a pair that ended meanwhile stays ended.
    model.cancelling('watched:/w/.bitexact/runs/p1');
    model.apply({ id: 'watched:/w/.bitexact/runs/p1', watched, event: { kind: 'done', dir: watched.dir, verdict: 'cancelled', headline: 'CANCELLED during run 1 of 2', exitCode: 2 } });
    expect(model.resumed('watched:/w/.bitexact/runs/p1')).toBeUndefined();
    expect([pair.state, pair.verdict, phaseText(pair)]).toEqual(['done', 'cancelled', 'CANCELLED during run 1 of 2']);
  });

  it('a pair whose runs differ says so while the engine checks the code for its suspects', async () => {
    const dir = scratch();
    const toy = path.join(ROOT, 'examples/toy_runs/completion_order_trainer.py');
    const { pair, seen } = await watched({ id: 'd', cwd: dir, command: ['python3', toy, '6'], out: path.join(dir, 'runs') });
    const phases = seen.map((s) => s.phase);
    const checking = phases.indexOf('the runs differ; checking the code for suspects…');
    expect(checking, phases.join(' | ')).toBeGreaterThan(phases.indexOf('comparing the runs…'));
    expect(seen[checking]!.status).toBe('bitexact: the runs differ; checking the code for suspects…');
    expect(pair).toMatchObject({ state: 'done', verdict: 'differs' });
  }, 60_000);

  it('a command that cannot start is failed, with the engine\'s reason; so is a refused request', async () => {
    const dir = scratch();
    const { pair } = await watched({ id: 'f', cwd: dir, command: ['no-such-python-here', 'x.py'], out: path.join(dir, 'runs') });
    expect(pair.state).toBe('failed');
    expect(phaseText(pair)).toMatch(/^cannot start `no-such-python-here`: /);
    const model = new LivePairs();
    model.start({ id: 'r', cwd: dir, command: ['python3'] }, 'python3');
    model.settle('r', { error: 'runs: Too small: expected number to be >=2' });
    expect(phaseText(model.get('r')!)).toBe('runs: Too small: expected number to be >=2');
    expect(model.active()).toEqual([]);
    // A failed pair stays beside the listed ones (its row says why) until it is dismissed.
    expect(model.besideListed([]).map((p) => p.id)).toEqual(['r']);
    expect(shortNumber(0.123456789)).toBe('0.12346');
    expect(shortNumber(12345678.9)).toBe('12346000');
    expect(shortNumber(Number.NaN)).toBe('NaN');
  });
});

describe('pairs started elsewhere (a terminal\'s `bitexact pair`), followed from progress.json', () => {
  /** A real CLI process in `cwd`, followed by the core's watcher as the server does; every event goes through the model with what the row said. */
  async function followed(cwd: string, argv: string[]) {
    const model = new LivePairs();
    const phases: string[] = [];
    const watcher = new PairWatcher({
      folders: () => [cwd],
      onEvent: (pair, event) => {
        const live = model.apply({ id: `watched:${pair.dir}`, event, watched: pair });
        if (live) phases.push(phaseText(live));
      },
    });
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'pair', '--', ...argv], { cwd, stdio: 'ignore' });
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let code: number | null | undefined;
    void exit.then((c) => (code = c));
    while (code === undefined) {
      watcher.poll();
      await new Promise((r) => setTimeout(r, 200));
    }
    watcher.poll();
    return { code, model, phases, pair: model.list()[0] };
  }

  it('a row of its own: its runs and steps while it goes, then report.json\'s verdict', async () => {
    const dir = scratch();
    const { code, pair, phases, model } = await followed(dir, ['python3', SLOW, '5', '0.3']);
    expect(code).toBe(0);
    expect(pair).toMatchObject({ title: `python3 ${SLOW} 5 0.3`, watched: true, state: 'done', verdict: 'bitwise', params: { cwd: dir, command: ['python3', SLOW, '5', '0.3'] } });
    expect(phases.some((p) => /^run 2 of 2 · step [1-5] · loss /.test(p)), phases.join(' | ')).toBe(true);
    const report = REPORT.parse(JSON.parse(fs.readFileSync(path.join(pair!.dir!, 'report.json'), 'utf8')));
    expect(pair!.headline).toBe(report.headline);
    expect(pair!.runs.map((r) => [r.run, r.steps, r.ended?.status])).toEqual([[1, 5, 'ended'], [2, 5, 'ended']]);
    // Once the listed reports hold it, the disk row takes over.
    expect(model.besideListed([pair!.dir!])).toEqual([]);
  }, 60_000);

  it('a command that cannot start: failed, with the engine\'s reason', async () => {
    const dir = scratch();
    const { code, pair } = await followed(dir, ['no-such-python-here', 'x.py']);
    expect(code).toBe(2);
    expect(pair).toMatchObject({ watched: true, state: 'failed', error: expect.stringMatching(/^cannot start `no-such-python-here`: /) });
  }, 30_000);
});

describe('ad-hoc pair settings (bitexact.pair.*)', () => {
  it('reads the defaults, names a value of the wrong type and keeps the default for it', () => {
    const raw: Record<string, unknown> = { runs: 1, variants: ['default', 'det'], preset: 'fast', env: { OK: '1', 'not a name': 'x' }, timeout: 30, probe: 'ops', runsDir: 'pairs' };
    const { defaults, problems } = readPairDefaults((key) => raw[key]);
    expect(defaults).toEqual({ runs: 2, variants: ['default', 'det'], preset: 'none', env: {}, timeout: 30, probe: 'ops', runsDir: 'pairs' });
    expect(problems).toEqual([
      'bitexact.pair.runs: ignored 1 (expected a whole number, 2 or more)',
      'bitexact.pair.preset: ignored "fast" (expected none | det)',
      'bitexact.pair.env: ignored {"OK":"1","not a name":"x"} (expected an object of VARIABLE: "value" strings)',
    ]);
    expect(readPairDefaults(() => undefined)).toEqual({ defaults: Object.fromEntries(PAIR_SETTING_DESCRIPTORS.map((d) => [d.key, d.default])), problems: [] });
  });

  it('makes a request the server takes: the typed command and its KEY=VALUE words over the defaults', () => {
    const dir = scratch();
    const { defaults } = readPairDefaults((key) => ({ runs: 3, env: { A: '1', B: '1' }, timeout: 20, probe: 'modules', runsDir: 'pairs', variants: [], preset: 'det' })[key]);
    const request = adHocRequest('x', dir, { argv: ['python3', 'train.py'], env: { B: '2' } }, defaults);
    expect(request).toEqual({ id: 'x', cwd: dir, command: ['python3', 'train.py'], runs: 3, preset: 'det', env: { A: '1', B: '2' }, timeout: 20, probe: 'modules', out: 'pairs' });
    const resolved = resolvePair(parsePairRunParams(request).settings);
    expect(resolved).toMatchObject({ command: ['python3', 'train.py'], runs: 3, preset: 'det', env: { A: '1', B: '2' }, timeoutMs: 20_000, probe: { mode: 'modules' }, out: path.join(dir, 'pairs') });
    // Nothing set: a plain pair of two runs in .bitexact/runs.
    const plain = adHocRequest('y', dir, { argv: ['python3', 'train.py'], env: {} }, readPairDefaults(() => undefined).defaults);
    expect(plain).toEqual({ id: 'y', cwd: dir, command: ['python3', 'train.py'], runs: 2 });
    expect(resolvePair(parsePairRunParams(plain).settings).out).toBe(path.join(dir, '.bitexact', 'runs'));
  });
});
