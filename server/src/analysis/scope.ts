// Import and alias resolution: turns `th.nn.functional.interpolate`, `Fn.interpolate` or a
// `from torch import scatter_add as sa` name into one canonical dotted name, so that rules match
// what the code calls, not how it spells it. Resolution is flow-insensitive within a file: Python
// code that rebinds `torch` or `F` to something else is rare enough not to pay for flow analysis.
import type { Node } from 'web-tree-sitter';
import type { CompiledAtomic } from './compiled-extensions.js';
import { absoluteName } from './module-names.js';
import { AliasAssignment, SELF_PREFIX, aliasAssignmentOf, importBindingsOf } from './binding-statements.js';
import { dottedParts } from './syntax.js';

/** Roots of modules whose attributes are never tensors (so `np.take(...)` is not `Tensor.take`). */
const NON_TENSOR_MODULES = new Set([
  'numpy', 'pandas', 'math', 'cmath', 'random', 'os', 'sys', 'time', 'json', 're', 'jax', 'tensorflow',
  'scipy', 'sklearn', 'statistics', 'itertools', 'functools', 'collections', 'operator', 'heapq',
  'bisect', 'glob', 'pathlib', 'shutil', 'subprocess', 'logging', 'argparse', 'typing', 'datetime',
  'threading', 'multiprocessing', 'queue', 'asyncio', 'builtins', 'string', 'struct', 'copy', 'pickle',
  'triton', 'cupy', 'transformers', 'lightning', 'pytorch_lightning', 'megatron', 'deepspeed',
]);

/** Re-export paths that name the same object as a shorter public one. */
const CANONICAL_PREFIXES: Array<[RegExp, string]> = [
  [/^torch\.nn\.modules(?:\.\w+)?\.(\w+)$/, 'torch.nn.$1'],
  [/^torch\.nn\.functional\.(\w+)$/, 'torch.nn.functional.$1'],
  [/^torch\.functional\.(\w+)$/, 'torch.$1'],
  [/^torch\._C\._VariableFunctions\.(\w+)$/, 'torch.$1'],
  [/^torch\._C\._nn\.(\w+)$/, 'torch.nn.functional.$1'],
  [/^torch\.Tensor\.(\w+)$/, 'Tensor.$1'],
  [/^torch\.backends\.cudnn\.(\w+)$/, 'torch.backends.cudnn.$1'],
  // An optional dependency re-exported by a project's compatibility module under its own name
  // (`try: import torch_scatter` there, `from pkg.typing import torch_scatter` here) is that library.
  [/^[\w.]+\.torch_scatter\.(\w+)$/, 'torch_scatter.$1'],
];

export function canonicalName(qualified: string): string {
  for (const [pattern, replacement] of CANONICAL_PREFIXES) {
    if (pattern.test(qualified)) return qualified.replace(pattern, replacement);
  }
  return qualified;
}

/**
 * The project around a file (`bitexact check`): the file's module, and the project's own names for
 * torch functions (project-aliases.ts), so that `from pkg.layers import interpolate` resolves to
 * `torch.nn.functional.interpolate` where `pkg/layers` says `interpolate = F.interpolate`.
 */
export interface ProjectContext {
  module?: string;
  isPackage?: boolean;
  aliases: Readonly<Record<string, string>>;
  /**
   * Functions of the project's compiled extensions that reach a float atomic add
   * (compiled-extensions.ts), by `module.function` as Python calls them (`fused_ext.backward`).
   */
  compiled?: Readonly<Record<string, CompiledAtomic>>;
}

/** The trigger word a file calling a compiled extension's function gets (BX409 matches on it). */
export const COMPILED_TRIGGER = 'compiled_extension_call';

/**
 * The torch names a file's project aliases stand for, where the file mentions the alias (its last
 * segment): added to the text that decides which rules run on the file.
 */
export function aliasTriggers(project: ProjectContext, text: string): string {
  const extra = Object.entries(project.aliases).filter(([alias]) => text.includes(alias.slice(alias.lastIndexOf('.') + 1))).map(([, target]) => target);
  if (project.compiled && Object.keys(project.compiled).length > 0) extra.push(COMPILED_TRIGGER);
  return extra.length ? `\n${extra.join('\n')}\n` : '';
}

export class ImportScope {
  constructor(private readonly project?: ProjectContext) {}

  /** Local name → fully qualified dotted name it stands for. */
  private readonly bindings = new Map<string, string>();
  /** Names bound more than once to different things: never resolved. */
  private readonly ambiguous = new Set<string>();

  addImport(node: Node): void {
    for (const binding of importBindingsOf(node)) this.addImportBinding(binding);
  }

  /** addImport() for one binding of an import already read (see importBindingsOf). */
  addImportBinding([local, target]: readonly [string, string]): void {
    this.bind(local, target);
  }

  /**
   * `self.attn_fn = flash_attn_func` (in any method of the file): attribute name → what the import
   * it is bound to names, so `self.attn_fn(q, k, v)` calls that function. Flow-insensitive like the
   * rest, and class-insensitive: one attribute bound to two things anywhere in the file is neither.
   */
  private readonly selfBindings = new Map<string, string>();
  private readonly selfAmbiguous = new Set<string>();

  /** `F = torch.nn.functional` style aliases; anything else assigned to a bound name shadows it. */
  addAssignment(left: Node, right: Node | null): void {
    const op = aliasAssignmentOf(left, right);
    if (op) this.addAlias(op);
  }

  /** addAssignment() for an assignment already reduced to its name and dotted value (see aliasAssignmentOf). */
  addAlias([name, value, otherwise]: AliasAssignment): void {
    if (name.startsWith(SELF_PREFIX)) return this.addSelfAlias(name.slice(SELF_PREFIX.length), value);
    // A module-level `flash_attn_func = None` before `if HAS_FLASH: from flash_attn import
    // flash_attn_func`: a placeholder. Calling None raises, so a call of the name that runs calls
    // the import. (In a function, `torch = None` is a local that shadows the module there.)
    if (value === null) return;
    const target = value ? this.resolveParts(value) : undefined;
    const other = otherwise ? this.resolveParts(otherwise) : undefined;
    if (otherwise && !(other && isLibraryName(other))) {
      if (this.bindings.has(name)) this.shadow(name);
      return;
    }
    if (target && isLibraryName(target)) this.bind(name, target);
    else if (this.bindings.has(name)) this.shadow(name);
    // `loss_fn = F.cross_entropy if ... else F.nll_loss`: the name calls the first; the second is an
    // alternative (see alternativesOf), whose rules run on its calls too.
    if (other && other !== target && this.bindings.has(name)) this.alternatives.set(name, new Set([...(this.alternatives.get(name) ?? []), other]));
  }

  /** Local name → the other library functions a conditional binding (`a if c else b`) may call. */
  private readonly alternatives = new Map<string, Set<string>>();

  /**
   * The other things a dotted expression may name when its root is bound by `a if c else b` to two
   * library functions: `[b]` for a call of the name resolveExpression reads as `a`; empty otherwise.
   */
  alternativesOf(node: Node): string[] {
    const parts = dottedParts(node);
    const [root, ...rest] = parts ?? [];
    if (root === undefined || this.ambiguous.has(root) || !this.bindings.has(root)) return [];
    return [...(this.alternatives.get(root) ?? [])].map((base) => this.qualify(base, rest));
  }

  /**
   * A callable kept on the instance: bound when every such assignment of the file names one thing
   * rooted in an import (any library: the attribute holds a reference, not a module alias). `None`
   * (the `else` of an optional import) binds nothing; any other value makes the attribute ambiguous.
   */
  private addSelfAlias(attribute: string, value: readonly string[] | undefined | null): void {
    if (value === null || this.selfAmbiguous.has(attribute)) return;
    const target = value ? this.resolveParts(value) : undefined;
    const previous = this.selfBindings.get(attribute);
    if (target !== undefined && (previous === undefined || previous === target)) this.selfBindings.set(attribute, target);
    else {
      this.selfBindings.delete(attribute);
      this.selfAmbiguous.add(attribute);
    }
  }

  /** Everything resolution depends on, as text: two scopes with equal states resolve every name alike. */
  state(): string {
    return `${this.project ? `${this.project.module}|${Object.keys(this.project.aliases).length}|` : ''}${[...this.bindings].map(([local, target]) => `${local}=${target}`).join(',')}|${[...this.ambiguous].join(',')}|${[...this.selfBindings].map(([a, target]) => `${a}=${target}`).join(',')}|${[...this.selfAmbiguous].join(',')}|${[...this.alternatives].map(([local, others]) => `${local}=${[...others].join('/')}`).join(',')}`;
  }

  /** What a call of `qualified` (`fused_ext.backward`, `torch.ops.ns.op`, resolved) reaches in the project's compiled extensions. */
  compiledCall(qualified: string): CompiledAtomic | undefined {
    const compiled = this.project?.compiled;
    if (!compiled) return undefined;
    // `torch.ops.ns.op.default`: an overload of the operator runs the kernels the operator registers.
    const overload = /^(torch\.ops\.\w+\.\w+)\.\w+$/.exec(qualified)?.[1];
    if (overload) qualified = overload;
    const absolute = absoluteName(qualified, this.project!.module, this.project!.isPackage) ?? qualified;
    return Object.hasOwn(compiled, absolute) ? compiled[absolute] : Object.hasOwn(compiled, qualified) ? compiled[qualified] : undefined;
  }

  /** A name the file itself defines at module level (`grouping_operation`, `Fn.apply`), qualified by the file's module. */
  ownName(dotted: string): string | undefined {
    return this.project?.module ? `${this.project.module}.${dotted}` : undefined;
  }

  /** Fully qualified name of a dotted expression rooted in an import, else undefined. */
  resolveExpression(node: Node): string | undefined {
    const parts = dottedParts(node);
    return parts ? this.resolveParts(parts) : undefined;
  }

  private resolveParts(parts: readonly string[]): string | undefined {
    const [root, ...rest] = parts;
    if (root === 'self' && rest.length > 0 && this.selfBindings.has(rest[0]!)) return canonicalName([this.selfBindings.get(rest[0]!)!, ...rest.slice(1)].join('.'));
    if (root === undefined || this.ambiguous.has(root)) return undefined;
    const base = this.bindings.get(root);
    return base === undefined ? undefined : this.qualify(base, rest);
  }

  /** `base.rest...` as the canonical name, through the project's aliases. */
  private qualify(base: string, rest: readonly string[]): string {
    const qualified = canonicalName([base, ...rest].join('.'));
    if (!this.project) return qualified;
    const aliases = this.project.aliases;
    const absolute = absoluteName(qualified, this.project.module, this.project.isPackage);
    if (absolute !== undefined && Object.hasOwn(aliases, absolute)) return aliases[absolute]!;
    // A project name for a library module (`from pkg._triton import tl`): its attributes are the module's.
    const module = rest.length ? absoluteName(canonicalName(base), this.project.module, this.project.isPackage) : undefined;
    return module !== undefined && Object.hasOwn(aliases, module) ? canonicalName([aliases[module]!, ...rest].join('.')) : qualified;
  }

  /**
   * Local names bound to something whose last segment is in `finals` (`sa` for `scatter_add as sa`),
   * and instance attributes so bound (`attn_fn` for `self.attn_fn = flash_attn_func`).
   */
  namesBoundTo(finals: ReadonlySet<string>): string[] {
    const endsIn = (target: string) => finals.has(target.slice(target.lastIndexOf('.') + 1));
    const locals = [...this.bindings].filter(([local]) => endsIn(this.resolveParts([local]) ?? '') || [...(this.alternatives.get(local) ?? [])].some(endsIn)).map(([local]) => local);
    return [...locals, ...[...this.selfBindings].filter(([, target]) => endsIn(target)).map(([attribute]) => attribute)];
  }

  /** The last segments of the project's aliases (scope.ts ProjectContext) of names ending in `finals`. */
  projectNamesFor(finals: ReadonlySet<string>): string[] {
    if (!this.project) return [];
    return Object.entries(this.project.aliases).filter(([, target]) => finals.has(target.slice(target.lastIndexOf('.') + 1))).map(([alias]) => alias.slice(alias.lastIndexOf('.') + 1));
  }

  /** A local name bound to exactly `target` (`torch` for `import torch`, `th` for `import torch as th`), for fixes that call it. */
  localNameOf(target: string): string | undefined {
    for (const [local, bound] of this.bindings) if (bound === target && !this.ambiguous.has(local)) return local;
    return undefined;
  }

  /** Whether a name was bound by an import (even if later rebound): such a name is a module, not a tensor. */
  isImportedName(name: string): boolean {
    return this.bindings.has(name) || this.ambiguous.has(name);
  }

  isNonTensorModule(qualified: string): boolean {
    return NON_TENSOR_MODULES.has(qualified.split('.')[0]!);
  }

  private bind(name: string, target: string): void {
    const previous = this.bindings.get(name);
    if (previous !== undefined && previous !== target) this.shadow(name);
    else if (!this.ambiguous.has(name)) this.bindings.set(name, target);
  }

  private shadow(name: string): void {
    this.bindings.delete(name);
    this.ambiguous.add(name);
  }
}

function isLibraryName(qualified: string): boolean {
  const root = qualified.split('.')[0]!;
  return root === 'torch' || root === 'Tensor' || NON_TENSOR_MODULES.has(root);
}
