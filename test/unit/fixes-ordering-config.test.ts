// Quick-fixes of the ordering (BX135, BX136) and configuration (BX202-BX206) rules: apply each
// fix's edits to the source and check the text that results.
import { describe, expect, it } from 'vitest';
import type { Finding, Fix, TextEdit } from '../../server/src/analysis/types.js';
import { check } from '../support/checker.js';

/** Applies edits given as 0-based line/UTF-16 column ranges, last edit first. */
function apply(text: string, edits: readonly TextEdit[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const offset = (p: { line: number; column: number }) => lineStarts[p.line]! + p.column;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  let out = text;
  for (const edit of sorted) out = out.slice(0, offset(edit.range.start)) + edit.newText + out.slice(offset(edit.range.end));
  return out;
}

function realFixes(finding: Finding): Fix[] {
  return finding.fixes.filter((f) => !f.isSuppression);
}

/** The single finding of `rule` in `text`, its one non-suppression fix applied. */
async function fixed(text: string, rule: string, overrides: Parameters<typeof check>[1] = {}): Promise<{ text: string; fix: Fix; finding: Finding }> {
  const findings = (await check(text, overrides)).filter((f) => f.rule === rule);
  expect(findings, `${rule} findings in:\n${text}`).toHaveLength(1);
  const finding = findings[0]!;
  const fixes = realFixes(finding);
  expect(fixes).toHaveLength(1);
  return { text: apply(text, fixes[0]!.edits), fix: fixes[0]!, finding };
}

describe('fixes: BX135 sort-unstable-indices', () => {
  it.each([
    ['order = torch.argsort(x)\n', 'order = torch.argsort(x, stable=True)\n'],
    ['order = x.argsort()\n', 'order = x.argsort(stable=True)\n'],
    ['order = x.argsort( )\n', 'order = x.argsort( stable=True)\n'],
    ['v, i = torch.sort(x, dim=1,)\n', 'v, i = torch.sort(x, dim=1, stable=True,)\n'],
    ['i = x.sort(descending=True, stable=False).indices\n', 'i = x.sort(descending=True, stable=True).indices\n'],
    ['i = x.sort(stable=None)[1]\n', 'i = x.sort(stable=True)[1]\n'],
    ['v, i = torch.sort(\n    x,\n    dim=-1,  # rows\n)\n', 'v, i = torch.sort(\n    x,\n    dim=-1, stable=True,  # rows\n)\n'],
    ['label = "é€"; order = torch.argsort(x)\n', 'label = "é€"; order = torch.argsort(x, stable=True)\n'],
  ])('%j', async (body, expected) => {
    const source = `import torch\n${body}`;
    const result = await fixed(source, 'BX135');
    expect(result.text).toBe(`import torch\n${expected}`);
    expect(result.fix.safety).toBe('safe');
    expect(result.finding.severity).toBe('info');
  });

  it('the fixed text has no BX135 finding left', async () => {
    const { text } = await fixed('import torch\n_, perm = scores.sort(dim=-1)\n', 'BX135');
    expect((await check(text)).filter((f) => f.rule === 'BX135')).toEqual([]);
  });
});

describe('fixes: BX136 topk-unsorted', () => {
  it.each([
    ['w, i = torch.topk(s, 4, sorted=False)\n', 'w, i = torch.topk(s, 4, sorted=True)\n'],
    ['w, i = s.topk(4, -1, True, False)\n', 'w, i = s.topk(4, -1, True, True)\n'],
    ['i = torch.topk(s, 4, -1, True, False).indices\n', 'i = torch.topk(s, 4, -1, True, True).indices\n'],
  ])('%j', async (body, expected) => {
    const result = await fixed(`import torch\n${body}`, 'BX136');
    expect(result.text).toBe(`import torch\n${expected}`);
    expect(result.fix.safety).toBe('safe');
    expect(result.finding.detail).toContain('sorted=True');
  });
});

describe('fixes: BX202 cudnn-deterministic-off', () => {
  it('sets the flag to True', async () => {
    const result = await fixed('import torch.backends.cudnn as cudnn\ncudnn.deterministic = False  # speed\n', 'BX202');
    expect(result.text).toBe('import torch.backends.cudnn as cudnn\ncudnn.deterministic = True  # speed\n');
    expect(result.fix.safety).toBe('safe');
    expect(result.finding.severity).toBe('warning');
  });
});

describe('fixes: BX203 deterministic-warn-only', () => {
  it.each([
    ['torch.use_deterministic_algorithms(True, warn_only=True)\n', 'torch.use_deterministic_algorithms(True, warn_only=False)\n'],
    ['torch.set_deterministic_debug_mode("warn")\n', 'torch.set_deterministic_debug_mode("error")\n'],
    ["torch.set_deterministic_debug_mode('warn')\n", "torch.set_deterministic_debug_mode('error')\n"],
    ['torch.set_deterministic_debug_mode(1)\n', 'torch.set_deterministic_debug_mode("error")\n'],
  ])('%j', async (body, expected) => {
    const result = await fixed(`import torch\n${body}`, 'BX203');
    expect(result.text).toBe(`import torch\n${expected}`);
    expect(result.fix.safety).toBe('unsafe');
  });
});

describe('fixes: BX205 misspelt-backend-flag', () => {
  it.each([
    ['torch.backends.cudnn.benchmarks = False\n', 'torch.backends.cudnn.benchmark = False\n', 'safe'],
    ['torch.backends.cudnn.benchmarks = True\n', 'torch.backends.cudnn.benchmark = True\n', 'unsafe'],
    ['torch.backends.cudnn.determinstic = True\n', 'torch.backends.cudnn.deterministic = True\n', 'safe'],
    ['torch.backends.cudnn.deterministics = True\n', 'torch.backends.cudnn.deterministic = True\n', 'safe'],
    ['torch.backends.cudnn.enable = True\n', 'torch.backends.cudnn.enabled = True\n', 'unsafe'],
    ['torch.backends.cuda.matmul.alow_tf32 = False\n', 'torch.backends.cuda.matmul.allow_tf32 = False\n', 'unsafe'],
    ['torch.backends.cuda.allow_tf32 = False\n', 'torch.backends.cuda.matmul.allow_tf32 = False\n', 'unsafe'],
    ['torch.utils.deterministic.fill_uninitialised_memory = True\n', 'torch.utils.deterministic.fill_uninitialized_memory = True\n', 'safe'],
  ])('%j', async (body, expected, safety) => {
    const result = await fixed(`import torch\n${body}`, 'BX205');
    expect(result.text).toBe(`import torch\n${expected}`);
    expect(result.fix.safety).toBe(safety);
    expect(result.finding.severity).toBe('error');
    expect(result.finding.detail).toMatch(/Did you mean|lives on/);
  });

  it('offers no rename when nothing is close', async () => {
    const findings = (await check('import torch\ntorch.backends.cudnn.speed_mode = True\n')).filter((f) => f.rule === 'BX205');
    expect(findings).toHaveLength(1);
    expect(realFixes(findings[0]!)).toEqual([]);
    expect(findings[0]!.detail).toContain('`benchmark`');
  });

  it('says that matmul typos raise', async () => {
    const { finding } = await fixed('import torch\ntorch.backends.cuda.matmul.allow_tf_32 = True\n', 'BX205');
    expect(finding.message).toContain('AttributeError');
  });
});

describe('fixes: BX206 cublas-workspace-config', () => {
  it.each([
    ['os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:2"\n', 'os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"\n'],
    ["os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', '4096:8')\n", "os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')\n"],
    ['os.environ.update({"CUBLAS_WORKSPACE_CONFIG": ":16:2"})\n', 'os.environ.update({"CUBLAS_WORKSPACE_CONFIG": ":4096:8"})\n'],
    ['os.putenv("CUBLAS_WORKSPACE_CONFIG", "")\n', 'os.putenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")\n'],
  ])('%j', async (body, expected) => {
    const result = await fixed(`import os\n${body}`, 'BX206');
    expect(result.text).toBe(`import os\n${expected}`);
    expect(result.fix.safety).toBe('safe');
    expect(result.finding.severity).toBe('warning');
  });

  it('a valid value is info on torch 2.11 and silent on 2.10', async () => {
    const source = 'import os\nos.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"\n';
    const recent = (await check(source)).filter((f) => f.rule === 'BX206');
    expect(recent.map((f) => f.severity)).toEqual(['info']);
    expect(recent[0]!.detail).toContain('0.090 ms');
    expect(realFixes(recent[0]!)).toEqual([]);
    const older = (await check(source, { torchVersion: [2, 10] })).filter((f) => f.rule === 'BX206');
    expect(older).toEqual([]);
  });
});
