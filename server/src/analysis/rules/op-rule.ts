// Builds a rule for a PyTorch op from a declarative spec: which callees, which variant of the op
// applies (mode=, reduce=, accumulate=...), and per torch version what the op does by default and
// under torch.use_deterministic_algorithms(True). The severity logic of DESIGN.md lives here once.
import type { Node } from 'web-tree-sitter';
import { CallSite, callRange } from '../calls.js';
import { offByDefault } from '../defaults.js';
import type { Fix } from '../types.js';
import { literalValue } from '../syntax.js';
import { formatTorchVersion, inRange } from '../version.js';
import { costOnH200, formatSlowdown } from './cost.js';
import { deterministicAround } from './mode-around.js';
import { fitMessage, type ModeOutcome, type Outcomes, type Rule, type RuleContext, type RuleFact } from './rule.js';

/** varies: measured (or documented and not contradicted) to differ run to run;
 *  documented: listed as nondeterministic but bitwise stable in every measured run; stable: neither. */
export type ByDefault = 'varies' | 'documented' | 'stable';
export type UnderMode = 'deterministic' | 'raises' | 'varies';

export interface OpBehaviour {
  /** Torch versions this holds for; the first matching entry of a variant wins. */
  torch: string;
  byDefault: ByDefault;
  underMode: UnderMode;
  source: 'measured' | 'docs';
  /** Ground-truth case ('op | variant') for measured behaviour; tests check the claim against it. */
  case?: string;
  /** Slowdown of the deterministic path as measured, e.g. 4.63 (shown by cost.ts formatSlowdown: "4.6×"). */
  slowdown?: number;
}

export interface OpVariant {
  /** Shown after the op name, e.g. 'mode="bilinear"'; '' for the plain op. */
  label: string;
  behaviours: OpBehaviour[];
}

export interface OpRuleSpec {
  id: string;
  name: string;
  summary: string;
  /** Markdown: rationale and examples; the facts table is appended from `variants`. */
  docs: string;
  calls: string[];
  /** Extra text triggers beyond the callees' own names. */
  triggers?: string[];
  /** Words of which one must also be in the file (see Rule.requires). */
  requires?: string[];
  /**
   * What the op does that varies, as a short clause after its name: "adds floats with CUDA atomics,
   * in a varying order". The message is this clause; the mechanism at length is in `docs`.
   */
  why: string;
  /** The deterministic alternative to name when the mode cannot help (raises or still varies), as a clause. */
  alternative: string;
  /** Only the backward pass is affected: silent under no_grad/inference_mode. */
  backwardOnly?: boolean;
  /**
   * For a backward-only hazard, the tensor whose gradient the hazardous backward computes (the
   * interpolated input, not the grid): one made in the function from constants has no gradient.
   */
  gradInput?: (call: CallSite) => Node | undefined;
  /**
   * The tensor whose dtype decides exactness: integer accumulation is exact. For a backward-only
   * hazard, the tensor the gradient flows into: an integer one has no gradient.
   */
  accumulator?: (call: CallSite) => Node | undefined;
  /**
   * The values the op adds (or writes) into the accumulator: when all are one number (uniform-values.ts),
   * every order of the additions gives the same sum, and every duplicate write the same value.
   */
  addends?: (call: CallSite) => Node | undefined;
  /** The index whose repeats make the op vary: an index that cannot repeat (values.ts) is no hazard. */
  index?: (call: CallSite) => Node | undefined;
  /** The dimension the op indexes along: an index of size 1 there (one per row) cannot repeat. */
  dim?: (call: CallSite) => Node | undefined;
  /** Tensors the op requires to have the index's rank (scatter's self and src, gather's input). */
  sameRank?: (call: CallSite) => Array<Node | undefined>;
  /**
   * Whether the code shows the conditions under which the op was measured to vary (e.g. a long 1-D
   * float scan). Without them the default-mode hit is info: the level this rule's precision on
   * real code earns when it cannot tell (docs/real-code.md).
   */
  evidence?: (call: CallSite, ctx: RuleContext) => boolean;
  /** Which variant applies to this call; undefined means the call is not a hazard. */
  variant?: (call: CallSite, ctx: RuleContext) => string | undefined;
  variants: Record<string, OpVariant>;
  fixes?: (call: CallSite, ctx: RuleContext) => Fix[];
  /**
   * false: no "deterministic algorithms around this statement" fix (mode-around.ts), because the
   * op's hazard is also in its backward, which runs later, outside the statement (convolutions).
   */
  modeAroundFix?: false;
}

const MODE_CALL = '`torch.use_deterministic_algorithms(True)`';

/** The `why` of a backward-only hazard whose backward adds gradients with atomics. */
export const ATOMIC_BACKWARD = 'adds its gradients with atomics, in a varying order';

export function defineOpRule(spec: OpRuleSpec): Rule {
  const calls = spec.calls;
  const triggers = [...new Set([...calls.map((c) => c.slice(c.lastIndexOf('.') + 1)), ...(spec.triggers ?? [])])];
  return {
    id: spec.id,
    name: spec.name,
    family: 'torch-op',
    // An op's hit reads the call, the values and guards of its own function, and the imports.
    locality: 'function',
    defaultSeverity: 'warning',
    summary: spec.summary,
    docs: spec.docs,
    facts: factsOf(spec),
    triggers,
    requires: spec.requires,
    backwardOnly: spec.backwardOnly,
    calls,
    onCall(call, ctx) {
      const key = spec.variant ? spec.variant(call, ctx) : 'default';
      if (key === undefined) return;
      const variant = spec.variants[key];
      if (!variant) throw new Error(`${spec.id}: variant '${key}' is not declared`);
      const behaviour = variant.behaviours.find((b) => inRange(ctx.torchVersion, b.torch));
      if (!behaviour) return;
      if (spec.backwardOnly && (ctx.runsWithoutGrad(call.node) || noBackward(spec, call, ctx))) return;
      if (spec.gradInput && noGradInto(spec.gradInput(call), ctx)) return;
      if (spec.index && ctx.values.of(spec.index(call)).unique) return;
      if (spec.index && spec.dim && onePerRow(spec, call, ctx)) return;
      const exact = spec.accumulator && ctx.values.of(spec.accumulator(call)).dtype === 'int';
      const sameAddends = !!spec.addends && ctx.values.uniform(spec.addends(call));
      const byDefault: ByDefault = (exact || sameAddends) && behaviour.byDefault !== 'stable' ? 'stable' : behaviour.byDefault;
      const outcomes = outcomesFor(spec, { ...behaviour, byDefault }, opName(call, variant.label), formatTorchVersion(ctx.torchVersion), !!exact);
      if (Object.keys(outcomes).length === 0) return;
      if (outcomes.off?.severity === 'warning' && spec.evidence && !spec.evidence(call, ctx)) outcomes.off = { ...outcomes.off, severity: 'info' };
      // Under `if self.resize_inputs:` with the flag off by default: an opt-in the default run skips.
      const optIn = outcomes.off?.severity === 'warning' ? offByDefault(call.node, ctx) : undefined;
      if (optIn && outcomes.off) outcomes.off = { ...outcomes.off, severity: 'info', detail: `This runs only when \`${optIn}\` is turned on; it is off by default.${outcomes.off.detail ? ` ${outcomes.off.detail}` : ''}` };
      // Made reproducible by the mode in the forward (a backward-only hazard would need it in the backward).
      if (outcomes.off && behaviour.underMode === 'deterministic' && !spec.backwardOnly && spec.modeAroundFix !== false) outcomes.off = { ...outcomes.off, fixes: [...(outcomes.off.fixes ?? []), ...deterministicAround(call, ctx)] };
      ctx.report({ node: call.node, range: callRange(call), outcomes, fixes: spec.fixes?.(call, ctx) ?? [] });
    },
  };
}

/**
 * A backward-only hazard needs a CUDA backward into the source: a source that cannot require grad
 * (a tensor built from literals or config, a `.detach()`, a buffer) has none, and an op whose source
 * or index the code puts on the CPU runs the CPU kernels, which accumulate in a fixed order.
 */
function noBackward(spec: OpRuleSpec, call: CallSite, ctx: RuleContext): boolean {
  const source = spec.accumulator ? ctx.values.of(spec.accumulator(call)) : undefined;
  return !!source?.gradFree || !!source?.cpu || (!!spec.index && !!ctx.values.of(spec.index(call)).cpu);
}

/**
 * The input whose gradient the atomics add up cannot require grad: made in the function from host
 * data or sizes (devices.ts), or grad-free by the core's value facts (a buffer, a `.detach()`, a
 * factory's leaf; grad-values.ts).
 */
function noGradInto(input: Node | undefined, ctx: RuleContext): boolean {
  return !!input && (ctx.isConstant(input) || !!ctx.values.of(input).gradFree);
}

/**
 * Has the index size 1 along the op's dimension? `idx.unsqueeze(-1)` on `dim=2` needs the rank: the
 * index's own, or that of a tensor the op requires to match it (`src.expand(-1, n, 1)` is 3-D).
 */
function onePerRow(spec: OpRuleSpec, call: CallSite, ctx: RuleContext): boolean {
  const index = spec.index!(call);
  const d = literalValue(spec.dim!(call));
  if (typeof d !== 'number') return false;
  const dims = ctx.values.singletonDims(index);
  if (dims.includes(d)) return true;
  if (d < 0 || !dims.some((s) => s < 0)) return false;
  const rank = [index, ...(spec.sameRank?.(call) ?? [])].map((n) => ctx.values.of(n).rank).find((r) => r !== undefined);
  return rank !== undefined && dims.some((s) => s < 0 && s + rank === d);
}

/** The op as the code names it (`.scatter_add_`, `F.interpolate`), its last name, and the variant's label. */
interface OpName {
  name: string;
  short: string;
  label: string;
}

function opName(call: CallSite, label: string): OpName {
  const fn = call.node.childForFieldName('function');
  const name = call.display ?? (call.receiver ? `.${call.callee.slice('Tensor.'.length)}` : (fn?.text ?? call.callee));
  const short = call.receiver ? name : call.callee.slice(call.callee.lastIndexOf('.') + 1);
  return { name: `\`${name}\``, short: `\`${short}\``, label };
}

/**
 * One message from a clause about the op, most informative form first: with the variant's label
 * and the mode's note, then without the label, then with the op's last name only (a long alias or
 * a wrapper call), then without the note. The detail says what a shorter form leaves out.
 */
function opMessage(op: OpName, clause: string, note: string): { message: string; droppedLabel: boolean } {
  const names = [...new Set([op.name, op.short])];
  const forms = [note, ''].flatMap((n) =>
    names.flatMap((name) => [
      ...(op.label ? [{ text: `${name} with ${op.label} ${clause}${n}`, labelled: true }] : []),
      { text: `${name} ${clause}${n}`, labelled: !op.label },
    ]),
  );
  const message = fitMessage(...forms.map((f) => f.text));
  return { message, droppedLabel: !forms.find((f) => f.text === message)!.labelled };
}

function outcome(severity: ModeOutcome['severity'], op: OpName, clause: string, note: string, detail: string): ModeOutcome {
  const { message, droppedLabel } = opMessage(op, clause, note);
  return { severity, message, detail: droppedLabel ? `Called with ${op.label}. ${detail}` : detail };
}

function costText(b: OpBehaviour, version: string): string {
  return b.slowdown === undefined ? '' : ` (${costOnH200(b.slowdown, b.source === 'measured' ? '2.11' : version)})`;
}

function outcomesFor(spec: OpRuleSpec, b: OpBehaviour, op: OpName, version: string, exact: boolean): Outcomes {
  const outcomes: Outcomes = {};
  if (b.byDefault === 'varies') {
    const remedy =
      b.underMode === 'deterministic'
        ? `${MODE_CALL} makes it reproducible${costText(b, version)}.`
        : b.underMode === 'raises'
          ? `${MODE_CALL} raises on it, so ${spec.alternative}.`
          : `${MODE_CALL} does not fix it, so ${spec.alternative}.`;
    outcomes.off = outcome('warning', op, spec.why, '', remedy);
  } else if (b.byDefault === 'documented') {
    const detail = `It was bitwise stable in every measured run on an H200 (torch 2.11). If runs must match bit for bit, ${spec.alternative}.`;
    outcomes.off = outcome('info', op, spec.why, ', per the PyTorch docs', detail);
  }
  if (b.underMode === 'raises') {
    const even = exact ? ', even for integer dtypes' : '';
    outcomes.on = outcome('error', op, 'raises under deterministic mode: it has no deterministic kernel', '', `${MODE_CALL} raises RuntimeError on it in torch ${version}${even}, so ${spec.alternative}.`);
    if (outcomes.off) {
      outcomes.warn = outcome(outcomes.off.severity, op, spec.why, '; warn-only mode keeps that kernel', `\`warn_only=True\` only warns here and keeps the nondeterministic kernel, so ${spec.alternative}.`);
    }
  } else if (b.underMode === 'varies' && b.byDefault !== 'stable') {
    const stays = outcome('error', op, spec.why, ', even under deterministic mode', `It stays nondeterministic under ${MODE_CALL}, without any error or warning (measured, torch 2.11), so ${spec.alternative}.`);
    outcomes.on = stays;
    outcomes.warn = stays;
  }
  return outcomes;
}

function factsOf(spec: OpRuleSpec): RuleFact[] {
  const facts: RuleFact[] = [];
  for (const variant of Object.values(spec.variants)) {
    for (const b of variant.behaviours) {
      const byDefault = {
        varies: 'varies run to run by default',
        documented: 'documented as nondeterministic, but bitwise stable in every measured run',
        stable: 'deterministic by default',
      }[b.byDefault];
      const underMode = {
        deterministic: 'deterministic mode makes it reproducible',
        raises: 'deterministic mode raises RuntimeError',
        varies: 'deterministic mode leaves it nondeterministic, without a warning',
      }[b.underMode];
      const cost = b.slowdown !== undefined ? `, at ${formatSlowdown(b.slowdown)} the default time` : '';
      facts.push({
        torch: b.torch,
        source: b.source,
        case: b.case,
        claims: b.case ? { variesByDefault: b.byDefault === 'varies', underMode: b.underMode, slowdown: b.slowdown } : undefined,
        text: `${variant.label ? `with ${variant.label}: ` : ''}${byDefault}; ${underMode}${cost}`,
      });
    }
  }
  return facts;
}
