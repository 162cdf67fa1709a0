// Does a function defined in another file seed torch? A training entry point often seeds through
// a setup helper of its project (`cfg = setup(args)`, whose body calls `fix_random_seeds(...)`):
// `bitexact check` finds the helper's definition by name (Checker.dropSeededByCallees) and reads
// its body here, with the functions of its own file it calls, and then the imported ones it calls. Syntax only, like the rest of the
// seeding facts: a call named like a seed function seeds torch unless its receiver is another
// generator (`random.seed`, `np.random.seed`).
import type { Node } from 'web-tree-sitter';
import { importBindingsOf } from './binding-statements.js';

/** A helper named like a seeding function: set_seed, seed_everything, seed_all, fix_seed, setup_seed... */
export const SEED_HELPER_NAME = /^_?(set|fix|setup|init|seed|reset|make)?_?(random|global|all|torch|rng)?_?seeds?(_everything|_all|_torch|_rng|_random|_worker|_everywhere)?$/i;

/** Receivers whose seed functions seed a generator other than torch's. */
const OTHER_GENERATOR = /^(random|(np|numpy|tf|tensorflow|jax|cupy)\.random|np|numpy|tf|jax|cupy)$/;
/** torch's own seeder: `torch.cuda.manual_seed(_all)` alone leaves the CPU generator (the loader's shuffle) unseeded. */
const TORCH_RECEIVER = /^(torch|torch\.random)$/;

/** A call in the body of an `if` that tests a seed (`if seed is not None:`): the default run, given none, skips it. */
function underSeedTest(call: Node, body?: Node): boolean {
  for (let current = call.parent; current && current.id !== body?.id && current.type !== 'function_definition'; current = current.parent) {
    if (current.type === 'block' && current.parent?.type === 'if_statement' && current.parent.childForFieldName('consequence')?.id === current.id) {
      if (/seed/i.test(current.parent.childForFieldName('condition')?.text ?? '')) return true;
    }
  }
  return false;
}

/**
 * A seed call handed `None if seed < 0 else seed`: with the seed unset (the configuration's
 * default), the helper gets None and seeds from entropy, so it seeds only when a seed is given.
 */
function noneWhenUnset(call: Node): boolean {
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  return args.some((a) => {
    const value = a.type === 'keyword_argument' ? a.childForFieldName('value') : a;
    return value?.type === 'conditional_expression' && value.namedChildren.some((branch) => branch.type === 'none');
  });
}

const definitionOf = (child: Node) => (child.type === 'decorated_definition' ? child.childForFieldName('definition') : child);

/** What a function of a file shows of seeding: it seeds, or the imported functions it calls may. */
export interface FunctionSeeding {
  seeds: boolean;
  /** Functions of other files it calls (imported names, as they are defined there), to look into in turn. */
  imported: string[];
}

/**
 * Does the module-level function `name` of the file `root` seed torch on its plain path: a seed
 * call (`torch.manual_seed`, a helper named like one, imported or not), directly or through a
 * module-level function of the same file it calls (four levels deep)? Where it does not, the
 * imported functions it calls, for the caller to look into in their own files.
 */
export function functionSeedsTorch(root: Node, name: string): FunctionSeeding {
  const defs = new Map<string, Node>();
  // Imported name → its name where it is defined (`from .config import setup as prepare`), modules included.
  const imports = new Map<string, string>();
  for (const child of root.namedChildren) {
    if (child.type === 'import_from_statement' || child.type === 'import_statement') {
      for (const [local, target] of importBindingsOf(child)) imports.set(local, target.slice(target.lastIndexOf('.') + 1));
    }
    const def = definitionOf(child);
    const defName = def?.type === 'function_definition' ? def.childForFieldName('name')?.text : undefined;
    if (defName && def && !defs.has(defName)) defs.set(defName, def);
  }
  const imported = new Set<string>();
  const visiting = new Set<string>();
  const seeds = (fnName: string, depth: number): boolean => {
    const body = defs.get(fnName)?.childForFieldName('body');
    if (!body || visiting.has(fnName) || depth > 4) return false;
    visiting.add(fnName);
    for (const call of body.descendantsOfType('call')) {
      if (underSeedTest(call, body) || noneWhenUnset(call)) continue;
      const fn = call.childForFieldName('function');
      if (fn?.type === 'identifier') {
        if (defs.has(fn.text) ? seeds(fn.text, depth + 1) : SEED_HELPER_NAME.test(fn.text) && fn.text !== 'seed') return true;
        const original = imports.get(fn.text);
        if (original && !defs.has(fn.text)) imported.add(original);
      } else if (fn?.type === 'attribute') {
        const method = fn.childForFieldName('attribute')?.text ?? '';
        const receiver = fn.childForFieldName('object')?.text ?? '';
        if (method === 'manual_seed' && TORCH_RECEIVER.test(receiver)) return true;
        if (method !== 'seed' && SEED_HELPER_NAME.test(method) && !OTHER_GENERATOR.test(receiver)) return true;
        if (imports.has(receiver)) imported.add(method);
      }
    }
    return false;
  };
  return seeds(name, 0) ? { seeds: true, imported: [] } : { seeds: false, imported: [...imported] };
}

/**
 * The imported functions `bodies` call, by the name their module defines them under, to look into
 * for seeding (Candidate.seededBy): not those named like seed helpers, which the file's own reading
 * already judged, nor calls under a test of the seed, which a default run skips.
 */
export function importedSeedCandidates(bodies: readonly Node[], resolve: (fn: Node) => string | undefined): string[] {
  const names = new Set<string>();
  for (const body of bodies) {
    for (const call of body.descendantsOfType('call')) {
      const fn = call.childForFieldName('function');
      const resolved = fn ? resolve(fn) : undefined;
      if (!resolved || /^torch\b/.test(resolved) || underSeedTest(call) || noneWhenUnset(call)) continue;
      const name = resolved.slice(resolved.lastIndexOf('.') + 1);
      if (!SEED_HELPER_NAME.test(name)) names.add(name);
    }
  }
  return [...names];
}
