// The cross-file passes' questions, kept per state of the program's files (analysis/program-questions.ts):
// asked again of changed files, they say which asking files got another answer, and what the passes
// made of a candidate is decided once.
import { describe, expect, it } from 'vitest';
import { ProgramQuestions, SourceFile } from '../../server/src/analysis/cross-file.js';
import { loadChecker, settings } from '../support/checker.js';

const file = (path: string, text: string): SourceFile => ({ path, text, settings: settings(), offPath: false });
const LAYERS = file('layers.py', 'import torch.nn.functional as F\n\ndef grow(t):\n    return F.interpolate(t, size=4, mode="bicubic")\n');
const LOADER = 'import torch\nfrom layers import grow\n\ndef load(state):\n    with torch.no_grad():\n        return grow(state)\n';

describe('program questions', () => {
  it('answer once per state of the files, and renewed say which askers got another answer', async () => {
    const reader = (await loadChecker()).reader();
    const questions = new ProgramQuestions(reader, [LAYERS, file('loader.py', LOADER)], []);
    questions.begin(0);
    expect(questions.noGradOnly('grow', 0, 0)).toBe(true);
    const asked = reader.counts.questions;
    expect(questions.noGradOnly('grow', 0, 0)).toBe(true);
    expect(reader.counts.questions).toBe(asked);
    // A comment added to loader.py: asked again, the same answer.
    const same = questions.renewed([LAYERS, file('loader.py', `# loads\n${LOADER}`)], []);
    expect(same.changed).toEqual(new Set());
    expect(reader.counts.questions).toBe(asked + 1);
    // A call with gradients added: file 0's answer changed.
    const called = same.questions.renewed([LAYERS, file('loader.py', `${LOADER}\ndef step(t):\n    return grow(t)\n`)], []);
    expect(called.changed).toEqual(new Set([0]));
    expect(called.questions.noGradOnly('grow', 0, 0)).toBe(false);
  });

  it('decide each candidate once, and count its questions as asked again', async () => {
    const reader = (await loadChecker()).reader();
    const questions = new ProgramQuestions(reader, [LAYERS, file('loader.py', LOADER)], []);
    const candidate = {} as Parameters<ProgramQuestions['outcome']>[1];
    let decided = 0;
    const decide = () => (decided++, questions.noGradOnly('grow', 0, 0) ? undefined : candidate);
    questions.begin(0);
    expect(questions.outcome(0, candidate, decide)).toBeUndefined();
    questions.begin(0);
    expect(questions.outcome(0, candidate, decide)).toBeUndefined();
    expect(decided).toBe(1);
    // Still asked: a renewal asks it again and finds file 0's answer changed.
    expect(questions.renewed([LAYERS, file('loader.py', `${LOADER}\ndef step(t):\n    return grow(t)\n`)], []).changed).toEqual(new Set([0]));
  });
});
