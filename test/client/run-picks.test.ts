// The pick list that asks what a pair runs (client/src/run-picks.ts: the last choice first) and the
// words of "Pair-run with this fixed" (client/src/fix-pairs.ts) for each verdict the engine gives.
// The request the picks make is run through the real server in test/lsp/pair-with-fix.test.ts.
import { describe, expect, it } from 'vitest';
import { fixNote, fixedOutcome, fixedTitle, withFixRequest } from '../../client/src/fix-pairs.js';
import { adHocRequest, readPairDefaults } from '../../client/src/pair-settings.js';
import { PickFolder, lastOf, readLastChoice, runPickEntries } from '../../client/src/run-picks.js';
import { parsePairRunParams } from '../../server/src/runs/pair-request.js';
import { PAIR_VERDICTS } from '../../server/src/runs/report-schema.js';

const folder = (name: string, configs: PickFolder['listed']['configs'], error?: string): PickFolder => ({ name, path: `/ws/${name}`, listed: { file: `/ws/${name}/pyproject.toml`, configs, ...(error ? { error } : {}) } });
const A = folder('a', [
  { name: 'slow', command: ['python3', 'train.py'], cwd: '/ws/a' },
  { name: 'varied', command: ['python3', 'train.py', '2'], cwd: '/ws/a', runs: 3, variants: ['default', 'det'] },
  { name: 'typo', error: 'timout: not a run configuration key' },
]);
const labels = (entries: ReturnType<typeof runPickEntries>) => entries.map((e) => (e.separator ? `--${e.label}` : e.label));

describe('the run pick list', () => {
  it('lists each configuration, broken ones with why, then the ad-hoc command', () => {
    const entries = runPickEntries([A], undefined);
    expect(labels(entries)).toEqual(['--run configurations', '$(play) slow', '$(play) varied', '$(warning) typo', '--', '$(terminal) Ad hoc command…']);
    expect(entries[2]).toMatchObject({ description: 'python3 train.py 2', detail: '3 runs · variants default, det', choice: { kind: 'config', folder: '/ws/a', name: 'varied' } });
    expect(entries[3]).toMatchObject({ description: 'timout: not a run configuration key', broken: { file: '/ws/a/pyproject.toml' } });
  });

  it('puts the last choice first, once, under "recently used"; a choice no longer on offer is left out', () => {
    expect(labels(runPickEntries([A], { kind: 'config', folder: '/ws/a', name: 'varied' }))).toEqual(['--recently used', '$(play) varied', '--run configurations', '$(play) slow', '$(warning) typo', '--', '$(terminal) Ad hoc command…']);
    expect(labels(runPickEntries([A], { kind: 'adHoc' }))).toEqual(['--recently used', '$(terminal) Ad hoc command…', '--run configurations', '$(play) slow', '$(play) varied', '$(warning) typo']);
    // Renamed since, or in another folder of that name: nothing recent.
    expect(labels(runPickEntries([A], { kind: 'config', folder: '/ws/b', name: 'slow' }))[0]).toBe('--run configurations');
    // Several folders: each its group, and the recent one says its folder.
    const B = folder('b', [{ name: 'slow', command: ['python3', 'b.py'], cwd: '/ws/b' }]);
    const many = runPickEntries([A, B], { kind: 'config', folder: '/ws/b', name: 'slow' });
    expect(labels(many)).toEqual(['--recently used', '$(play) slow', '--run configurations · a', '$(play) slow', '$(play) varied', '$(warning) typo', '--', '$(terminal) Ad hoc command…']);
    expect(many[1]).toMatchObject({ detail: 'b', choice: { folder: '/ws/b' } });
    // A folder whose pyproject cannot be read says so; one with no configurations has no group.
    expect(labels(runPickEntries([folder('c', [], 'pyproject.toml: invalid TOML'), folder('d', [])], undefined))).toEqual(['--run configurations · c', '$(warning) pyproject.toml', '--', '$(terminal) Ad hoc command…']);
  });

  it('puts a suspect\'s own pair on top, and keeps re-runs out of the last choice', () => {
    const first = [{ label: 'the pair this suspect came from', separator: true as const }, { label: '$(debug-rerun) toy', choice: { kind: 'rerun' as const, dir: '/ws/a/.bitexact/runs/x', cwd: '/ws/a', title: 'toy' } }];
    expect(labels(runPickEntries([A], { kind: 'adHoc' }, first)).slice(0, 4)).toEqual(['--the pair this suspect came from', '$(debug-rerun) toy', '--recently used', '$(terminal) Ad hoc command…']);
    expect(lastOf(first[1]!.choice!)).toBeUndefined();
    expect(lastOf({ kind: 'config', folder: '/ws/a', name: 'slow' })).toEqual({ kind: 'config', folder: '/ws/a', name: 'slow' });
    // What the workspace kept, read back; anything else is no choice.
    expect(readLastChoice({ kind: 'config', folder: '/ws/a', name: 'slow' })).toEqual({ kind: 'config', folder: '/ws/a', name: 'slow' });
    expect(readLastChoice({ kind: 'adHoc', extra: 1 })).toEqual({ kind: 'adHoc' });
    for (const junk of [undefined, null, 'slow', { kind: 'config', name: 'slow' }, { kind: 'rerun', dir: '/x' }]) expect(readLastChoice(junk)).toBeUndefined();
  });
});

describe('Pair-run with this fixed: the request and its words', () => {
  const target = { rule: 'BX308', path: '/ws/a/pkg/train.py', line: 75, fix: 'Iterate in submission order' };

  it('makes a request the server accepts for every choice, the ad-hoc one under the pair defaults', () => {
    const { defaults } = readPairDefaults((key) => ({ runs: 3, env: { TOY: '1' } })[key]);
    const base = adHocRequest('p', '/ws/a', { argv: ['python3', 'train.py'], env: {} }, defaults);
    const requests = [
      withFixRequest('p', { kind: 'config', folder: '/ws/a', name: 'slow' }, target),
      withFixRequest('p', { kind: 'adHoc' }, target, base),
    ];
    expect(requests[1]).toEqual({ id: 'p', cwd: '/ws/a', command: ['python3', 'train.py'], runs: 3, env: { TOY: '1' }, withFix: { rule: 'BX308', path: '/ws/a/pkg/train.py', line: 75 } });
    for (const r of requests) expect(parsePairRunParams(r).settings.withFix).toEqual({ rule: 'BX308', path: '/ws/a/pkg/train.py', line: 75 });
    expect(() => withFixRequest('p', { kind: 'adHoc' }, target)).toThrow(/needs its command/);
    // A re-run with a fix: only id, cwd, rerun and withFix (the server refuses more).
    expect(() => parsePairRunParams({ ...withFixRequest('p', { kind: 'rerun', dir: '/nowhere', cwd: '/ws/a', title: 't' }, target), runs: 3 })).toThrow(/give only id, cwd and rerun \(and withFix\)/);
  });

  it('labels the row with the fix, and says what each verdict proves: only bitwise proves the fix', () => {
    expect(fixedTitle(target, 'slow')).toBe('BX308 fixed (train.py:75) · slow');
    const outcomes = Object.fromEntries(PAIR_VERDICTS.map((v) => [v, fixedOutcome(target, v, 'HEADLINE')]));
    expect(outcomes['bitwise']).toEqual({ level: 'info', text: 'bitexact: with the fix of BX308 at train.py:75, the runs are bitwise identical: the fix is proven on this pair. HEADLINE' });
    for (const v of PAIR_VERDICTS.filter((v) => v !== 'bitwise')) {
      expect(outcomes[v]!.level, v).toBe('warning');
      expect(outcomes[v]!.text, v).not.toContain('proven');
      expect(outcomes[v]!.text.endsWith('HEADLINE'), v).toBe(true);
    }
    expect(outcomes['differs']!.text).toContain('still differ');
    expect(outcomes['print-precision']!.text).toContain('printed precision');
    expect(PAIR_VERDICTS.map(fixNote)).toEqual(['fix proven', undefined, 'fix not enough', undefined, undefined, undefined]);
  });
});
