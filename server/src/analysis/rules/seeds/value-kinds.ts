// What kind of elements a value holds (strings, paths), parameter annotations and defaults, and
// which calls seed torch's global generator.
import type { Node } from 'web-tree-sitter';
import { callArguments, literalValue, unparenthesize } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { enclosingFunction, parameterDefault as defaultOfParameter } from '../../syntax.js';
import { builtinName, enclosingClass, methodName, resolvedCallee } from './file-scan.js';
import { SEED_HELPER_NAME } from '../../seeding-functions.js';
export type ElementKind = 'str' | 'other' | 'unknown';

const STR_METHODS = new Set([
  'lower', 'upper', 'strip', 'lstrip', 'rstrip', 'casefold', 'title', 'capitalize', 'replace', 'format', 'join',
  'removeprefix', 'removesuffix', 'decode', 'encode', 'zfill', 'ljust', 'rjust', 'center', 'swapcase', 'expandtabs',
  'hexdigest', 'read', 'readline', 'as_posix', 'strftime', 'translate', 'normalize',
]);
const STR_LIST_METHODS = new Set(['split', 'rsplit', 'splitlines', 'readlines', 'keys']);
/**
 * Helpers named as listings of files (`list_files`, `recursively_list_files`, `glob_paths`): they
 * return path strings, wherever they are defined (often in another package).
 */
const FILE_LISTING_NAME = /(^|_)(list|find|glob|walk)_?(files|paths|dirs|directories)$/i;
const STR_LIST_CALLS = new Set(['re.findall', 're.split', 'os.listdir', 'glob.glob', 'shlex.split', 'string.ascii_letters', 'os.path.split']);
const STR_CALLS = new Set(['str', 'repr', 'chr', 'format', 'ascii', 'os.path.join', 'os.path.basename', 'os.path.dirname', 'os.path.splitext', 'os.fspath', 're.sub', 'json.dumps']);
const STR_TYPES = new Set(['str', 'bytes', 'typing.List[str]']);

/** Is an expression a string (or bytes)? 'other' for numbers and None; 'unknown' when it cannot tell. */
export function scalarKind(node: Node | undefined | null, ctx: RuleContext, depth = 0): ElementKind {
  if (!node || depth > 5) return 'unknown';
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'string':
    case 'concatenated_string':
      return 'str';
    case 'integer':
    case 'float':
    case 'true':
    case 'false':
    case 'none':
      return 'other';
    case 'unary_operator':
      return scalarKind(expr.childForFieldName('argument'), ctx, depth + 1);
    case 'binary_operator': {
      const left = scalarKind(expr.childForFieldName('left'), ctx, depth + 1);
      const right = scalarKind(expr.childForFieldName('right'), ctx, depth + 1);
      if (expr.childForFieldName('operator')?.text === '%' && left === 'str') return 'str';
      if (left === right) return left;
      return left === 'str' || right === 'str' ? 'str' : 'unknown';
    }
    case 'tuple': {
      const kinds = expr.namedChildren.map((c) => scalarKind(c, ctx, depth + 1));
      if (kinds.includes('str')) return 'str';
      return kinds.length > 0 && kinds.every((k) => k === 'other') ? 'other' : 'unknown';
    }
    case 'call': {
      const builtin = builtinName(expr, ctx);
      if (builtin === 'len' || builtin === 'int' || builtin === 'float' || builtin === 'round' || builtin === 'abs' || builtin === 'ord' || builtin === 'id') return 'other';
      if (builtin && STR_CALLS.has(builtin)) return 'str';
      // A frozenset or tuple hashes through its elements: `frozenset(d.items())` holds a dict's
      // (name, value) pairs (the dedup idiom for dicts of settings), so it hashes like strings.
      if (builtin === 'frozenset' || builtin === 'tuple') {
        const [inner] = callArguments(expr).positional;
        const items = inner && unparenthesize(inner).type === 'call' && methodName(unparenthesize(inner), ctx) === 'items';
        return items || elementKind(inner, ctx, depth + 1) === 'str' ? 'str' : 'unknown';
      }
      const resolved = resolvedCallee(expr, ctx);
      if (resolved && STR_CALLS.has(resolved)) return 'str';
      const method = methodName(expr, ctx);
      if (method && STR_METHODS.has(method)) return 'str';
      return 'unknown';
    }
    case 'identifier':
      return nameKind(expr, ctx, depth, scalarKind);
    case 'attribute': {
      // p.name / p.stem / p.suffix of a pathlib path
      const name = expr.childForFieldName('attribute')?.text ?? '';
      return ['name', 'stem', 'suffix'].includes(name) && isPath(expr.childForFieldName('object'), ctx) ? 'str' : 'unknown';
    }
    default:
      return 'unknown';
  }
}

/** The kind of the elements an iterable yields. */
export function elementKind(node: Node | undefined | null, ctx: RuleContext, depth = 0): ElementKind {
  if (!node || depth > 5) return 'unknown';
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'string':
    case 'concatenated_string':
      return 'str'; // characters
    case 'list':
    case 'tuple':
    case 'set': {
      const items = expr.namedChildren.filter((c) => c.type !== 'comment');
      if (items.length === 0) return 'unknown';
      const kinds = items.map((c) => (c.type === 'list_splat' ? elementKind(c.namedChildren[0], ctx, depth + 1) : scalarKind(c, ctx, depth + 1)));
      if (kinds.every((k) => k === 'str')) return 'str';
      if (kinds.every((k) => k === 'other')) return 'other';
      return kinds.includes('str') ? 'str' : 'unknown';
    }
    case 'list_comprehension':
    case 'generator_expression':
    case 'set_comprehension': {
      const body = expr.childForFieldName('body');
      if (body?.type === 'identifier') {
        // {w for w in words}: the element is the loop variable, so ask about the iterable (of the
        // clause that binds it: `p for d in dirs for p in list_files(d)`).
        const clause = expr.namedChildren.find((c) => c.type === 'for_in_clause' && c.childForFieldName('left')?.text === body.text);
        if (clause) return elementKind(clause.childForFieldName('right'), ctx, depth + 1);
      }
      return scalarKind(body, ctx, depth + 1);
    }
    case 'call': {
      const builtin = builtinName(expr, ctx);
      const args = callArguments(expr);
      if (builtin === 'range') return 'other';
      if (builtin && ['set', 'frozenset', 'list', 'tuple', 'sorted', 'reversed', 'iter'].includes(builtin)) return elementKind(args.positional[0], ctx, depth + 1);
      if (builtin && STR_CALLS.has(builtin)) return 'str';
      const resolved = resolvedCallee(expr, ctx);
      if (resolved && (STR_LIST_CALLS.has(resolved) || STR_CALLS.has(resolved))) return 'str';
      const method = methodName(expr, ctx);
      if (method && (STR_LIST_METHODS.has(method) || STR_METHODS.has(method))) return method === 'keys' ? 'unknown' : 'str';
      const fn = expr.childForFieldName('function');
      const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
      return last && FILE_LISTING_NAME.test(last) ? 'str' : 'unknown';
    }
    case 'identifier':
      return nameKind(expr, ctx, depth, elementKind);
    case 'binary_operator': {
      const op = expr.childForFieldName('operator')?.text;
      if (!op || !['|', '&', '-', '^', '+'].includes(op)) return 'unknown';
      const left = elementKind(expr.childForFieldName('left'), ctx, depth + 1);
      const right = elementKind(expr.childForFieldName('right'), ctx, depth + 1);
      if (left === 'str' || right === 'str') return 'str';
      return left === right ? left : 'unknown';
    }
    default:
      return 'unknown';
  }
}

function nameKind(id: Node, ctx: RuleContext, depth: number, kind: (n: Node, ctx: RuleContext, depth: number) => ElementKind): ElementKind {
  const def = ctx.values.definition(id);
  if (def && !def.unpacked) return kind(def.value, ctx, depth + 1);
  // A loop variable: `for p in paths` / `[f(p) for p in paths]` yields the elements of `paths`.
  if (kind === scalarKind) {
    for (let current = id.parent; current && current.type !== 'function_definition' && current.type !== 'module'; current = current.parent) {
      const clauses = current.type === 'for_statement' ? [current] : current.namedChildren.filter((c) => c.type === 'for_in_clause');
      for (const clause of clauses) {
        if (clause.childForFieldName('left')?.text === id.text) return elementKind(clause.childForFieldName('right'), ctx, depth + 1);
      }
    }
  }
  // A parameter annotated `str` / `bytes` (or `list[str]` for iterables).
  const annotation = parameterAnnotation(id);
  if (annotation) {
    const text = annotation.text.replace(/\s+/g, '');
    if (kind === scalarKind) return STR_TYPES.has(text) ? 'str' : /^(int|float|bool)$/.test(text) ? 'other' : 'unknown';
    if (text === 'str') return 'str'; // iterating a string yields strings
    return /^(typing\.)?(list|List|set|Set|Sequence|Iterable|frozenset|FrozenSet|tuple|Tuple)\[(str|bytes)(,\.\.\.)?\]$/.test(text) ? 'str' : 'unknown';
  }
  return 'unknown';
}

/** The type annotation of the parameter named like `id` in its enclosing function. */
export function parameterAnnotation(id: Node): Node | undefined {
  const fn = enclosingFunction(id);
  const parameters = fn?.childForFieldName('parameters');
  if (!parameters) return undefined;
  for (const p of parameters.namedChildren) {
    if (p.type !== 'typed_parameter' && p.type !== 'typed_default_parameter') continue;
    const name = p.childForFieldName('name') ?? p.namedChildren.find((c) => c.type === 'identifier');
    if (name?.text === id.text) return p.childForFieldName('type') ?? undefined;
  }
  return undefined;
}

/** The default value of the parameter named like `id` in its enclosing function. */
export function parameterDefault(id: Node): Node | undefined {
  return defaultOfParameter(enclosingFunction(id), id.text) ?? undefined;
}

/** `x = ...` then `x` read inside the same function: follows names to a literal value if it can. */
export function literalThroughName(node: Node | undefined, ctx: RuleContext): ReturnType<typeof literalValue> {
  if (!node) return undefined;
  const expr = unparenthesize(node);
  const direct = literalValue(expr);
  if (direct !== undefined) return direct;
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    if (def && !def.unpacked) return literalValue(unparenthesize(def.value));
  }
  return undefined;
}

const PATH_TYPES = /^pathlib\.(Path|PurePath|PosixPath|WindowsPath|PurePosixPath|PureWindowsPath)(\.(cwd|home))?$/;
const PATH_RETURNING = new Set(['resolve', 'absolute', 'expanduser', 'with_name', 'with_suffix', 'with_stem', 'joinpath', 'relative_to', 'parent']);

/** Is an expression a pathlib path: `Path(...)`, `root / "x"`, a name bound to one, `self.root`, a `: Path` parameter? */
export function isPath(node: Node | undefined | null, ctx: RuleContext, depth = 0): boolean {
  if (!node || depth > 5) return false;
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'call': {
      const resolved = resolvedCallee(expr, ctx);
      if (resolved) return PATH_TYPES.test(resolved);
      const method = methodName(expr, ctx);
      const fn = expr.childForFieldName('function');
      return !!method && PATH_RETURNING.has(method) && isPath(fn?.childForFieldName('object'), ctx, depth + 1);
    }
    case 'binary_operator':
      return expr.childForFieldName('operator')?.text === '/' && isPath(expr.childForFieldName('left'), ctx, depth + 1);
    case 'attribute': {
      const name = expr.childForFieldName('attribute')?.text;
      const object = expr.childForFieldName('object');
      if (name === 'parent') return isPath(object, ctx, depth + 1);
      // self.root = Path(root) somewhere in the class.
      if (object?.type === 'identifier' && object.text === 'self') {
        const cls = enclosingClass(expr);
        for (const assignment of cls?.descendantsOfType('assignment') ?? []) {
          if (assignment.childForFieldName('left')?.text === expr.text && isPath(assignment.childForFieldName('right'), ctx, depth + 1)) return true;
        }
      }
      return false;
    }
    case 'identifier': {
      const def = ctx.values.definition(expr);
      if (def) return !def.unpacked && isPath(def.value, ctx, depth + 1);
      const annotation = parameterAnnotation(expr);
      if (annotation) return /^(pathlib\.)?(Path|PurePath|PosixPath)$/.test(annotation.text.trim());
      // for sub in root.iterdir(): sub.glob(...)
      for (let current = expr.parent; current; current = current.parent) {
        if (current.type === 'for_statement' && current.childForFieldName('left')?.text === expr.text) {
          const right = current.childForFieldName('right');
          const fn = right?.type === 'call' ? right.childForFieldName('function') : undefined;
          const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
          return !!method && ['glob', 'rglob', 'iterdir'].includes(method) && isPath(fn?.childForFieldName('object'), ctx, depth + 1);
        }
        if (current.type === 'function_definition') break;
      }
      return false;
    }
    default:
      return false;
  }
}

/** Seeders that seed torch's global generator (and usually random/NumPy with it). */
export const TORCH_SEEDERS = new Set([
  'torch.manual_seed', 'torch.random.manual_seed',
  'lightning.seed_everything', 'lightning.pytorch.seed_everything', 'pytorch_lightning.seed_everything',
  'lightning.fabric.seed_everything', 'lightning_fabric.seed_everything', 'lightning.fabric.utilities.seed.seed_everything',
  'lightning_fabric.utilities.seed.seed_everything', 'lightning.pytorch.utilities.seed.seed_everything',
  'pytorch_lightning.utilities.seed.seed_everything',
  'transformers.set_seed', 'transformers.trainer_utils.set_seed', 'transformers.enable_full_determinism',
  'transformers.trainer_utils.enable_full_determinism',
  'accelerate.utils.set_seed', 'accelerate.utils.random.set_seed',
  'megatron.training.initialize_megatron', 'megatron.training.initialize.initialize_megatron',
  'megatron.training.pretrain', 'megatron.training.training.pretrain', 'megatron.training.initialize._set_random_seed',
  'torchtitan.distributed.utils.set_determinism', 'composer.utils.reproducibility.seed_all', 'composer.utils.seed_all',
  'ignite.utils.manual_seed',
  // ColossalAI's launchers call set_seed(seed) unconditionally, seed=1024 by default (colossalai/initialize.py).
  'colossalai.launch', 'colossalai.launch_from_torch', 'colossalai.launch_from_slurm', 'colossalai.launch_from_openmpi',
  'colossalai.initialize.launch', 'colossalai.initialize.launch_from_torch', 'colossalai.initialize.launch_from_slurm',
  'colossalai.initialize.launch_from_openmpi',
]);

/**
 * Trainer classes that seed torch in their constructor (transformers' Trainer calls set_seed(args.seed);
 * Composer's calls seed_all, with a clock seed when given none, which BX302 reports).
 */
export const SEEDING_TRAINERS = /^(transformers(\.trainer)?\.(Trainer|Seq2SeqTrainer)|trl(\.\w+)*\.\w*Trainer|composer(\.trainer){0,2}\.Trainer)$/;

/** Modules whose seed functions never touch torch's generator. */
const NON_TORCH_SEED_MODULES = new Set(['random', 'numpy', 'tensorflow', 'jax', 'cupy', 'os', 'sys', 'sklearn', 'torch']);

/** The seed-helper names, which the core's cross-file seeding fact reads as well. */
export { SEED_HELPER_NAME };

/** A call in the body of an `if` that tests a seed (`if args.seed is not None:`, `if seed:`). */
function underSeedCondition(call: Node): boolean {
  for (let current = call.parent; current && current.type !== 'function_definition'; current = current.parent) {
    if (current.type === 'block' && current.parent?.type === 'if_statement' && current.parent.childForFieldName('consequence')?.id === current.id) {
      if (/seed/i.test(current.parent.childForFieldName('condition')?.text ?? '')) return true;
    }
  }
  return false;
}

/**
 * Does the file seed torch's global generator on its default path? A seeding call that runs only
 * when a seed is given does not count. Imported helpers named like seed functions
 * from modules it cannot see count (the check is per file); a helper defined in the file counts only
 * if its body seeds torch.
 */
export function seedsTorch(root: Node, ctx: RuleContext): { seeded: boolean; helperWithoutTorch?: string; onlyWhenGiven?: Node } {
  const defs = new Map<string, Node>();
  for (const def of root.descendantsOfType('function_definition')) {
    const name = def.childForFieldName('name')?.text;
    if (name && !defs.has(name)) defs.set(name, def);
  }
  let helperWithoutTorch: string | undefined;
  /** A seeding call that runs only when a seed is given (named in BX301's message). */
  let onlyWhenGiven: Node | undefined;
  let givenSeedsTorch = false;
  const visiting = new Set<string>();
  const seedsIn = (node: Node, depth: number): boolean => {
    for (const call of node.descendantsOfType('call')) {
      // `if args.seed is not None: torch.manual_seed(args.seed)`: the default run (no seed given) is unseeded.
      if (underSeedCondition(call)) {
        // Name torch's seeder where there is one (`random.seed` often comes first in such a block).
        const torchSeeder = TORCH_SEEDERS.has(resolvedCallee(call, ctx) ?? '');
        if (torchSeeder && !givenSeedsTorch) [onlyWhenGiven, givenSeedsTorch] = [call, true];
        else if (!onlyWhenGiven && /seed/i.test(call.childForFieldName('function')?.text ?? '')) onlyWhenGiven = call;
        continue;
      }
      const resolved = resolvedCallee(call, ctx);
      if (resolved !== undefined) {
        if (TORCH_SEEDERS.has(resolved) || SEEDING_TRAINERS.test(resolved)) return true;
        const last = resolved.slice(resolved.lastIndexOf('.') + 1);
        const rootModule = resolved.split('.')[0]!;
        if (/seed/i.test(last) && !NON_TORCH_SEED_MODULES.has(rootModule) && !resolved.startsWith('lightning') && !resolved.startsWith('pytorch_lightning')) return true;
        continue;
      }
      const fn = call.childForFieldName('function');
      if (fn?.type === 'identifier') {
        const def = defs.get(fn.text);
        if (def) {
          if (depth < 4 && !visiting.has(fn.text)) {
            visiting.add(fn.text);
            const inner = seedsIn(def.childForFieldName('body') ?? def, depth + 1);
            visiting.delete(fn.text);
            if (inner) return true;
            if (SEED_HELPER_NAME.test(fn.text)) helperWithoutTorch ??= fn.text;
          }
        } else if (!ctx.scope.isImportedName(fn.text) && SEED_HELPER_NAME.test(fn.text)) {
          return true; // star import or a name from elsewhere: assume it seeds
        }
      } else if (fn?.type === 'attribute') {
        const method = fn.childForFieldName('attribute')?.text ?? '';
        if (method === 'seed_everything' || method === 'set_seed' || method === 'seed_all') {
          const methodDef = defs.get(method);
          if (!methodDef) return true; // fabric.seed_everything(...), self.set_seed(...) defined elsewhere
          if (depth < 4 && !visiting.has(method)) {
            visiting.add(method);
            const inner = seedsIn(methodDef.childForFieldName('body') ?? methodDef, depth + 1);
            visiting.delete(method);
            if (inner) return true;
          }
        }
      }
    }
    return false;
  };
  const seeded = seedsIn(root, 0);
  return { seeded, helperWithoutTorch: seeded ? undefined : helperWithoutTorch, onlyWhenGiven: seeded ? undefined : onlyWhenGiven };
}
