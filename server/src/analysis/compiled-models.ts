// Does a file compile a whole model on its default path? Inductor then generates the model's
// backward itself, and some of it differs from eager PyTorch: the embedding backward becomes an
// index_put with accumulate, lowered to Triton float atomics (docs/real-code.md § "Compiled
// models"; measured on an H200 with torch 2.11 in bench/device/compiled_embedding.h200.jsonl).
// A program fact (program.ts ProgramFile.compiles), read once per file text by the ProgramReader.
//
// What counts: `torch.compile(model, ...)` or `model.compile(...)` where the compiled object is
// named as a whole model (`model`, `self.model`, `unwrapped_model`, `net`), not a block or a function
// (`torch.compile(block)`, `@torch.compile` on a helper: the embedding then stays eager). The call
// runs on the default path: unconditionally in its function (or module), or under `if FLAG:` /
// `if args.FLAG:` where the file gives FLAG a literal `True` default (`compile = True`,
// `compile: bool = True`, `add_argument("--compile", default=True)`): a switch the user must turn
// off. A compile under any other condition, in a loop or an except handler is an option, not the default.
import type { Node } from 'web-tree-sitter';
import { CONDITIONAL_PARENTS, isMainGuard } from './place.js';

/** The last name of what is compiled, when it names a whole model. */
const WHOLE_MODEL = /^(?:\w*_)?(?:model|net|network)s?$/i;

export function compilesWholeModel(root: Node, text: string): boolean {
  return root.descendantsOfType('call').some((call) => {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'compile') return false;
    const receiver = fn.childForFieldName('object');
    const compiled = receiver?.text === 'torch' ? firstPositional(call) : receiver;
    const last = compiled?.type === 'attribute' ? compiled.childForFieldName('attribute')?.text : compiled?.type === 'identifier' ? compiled.text : undefined;
    return !!last && WHOLE_MODEL.test(last) && onDefaultPath(call, text);
  });
}

function firstPositional(call: Node): Node | undefined {
  const first = call.childForFieldName('arguments')?.namedChildren[0];
  return first && first.type !== 'keyword_argument' ? first : undefined;
}

function onDefaultPath(node: Node, text: string): boolean {
  let child = node;
  for (let current = node.parent; current; child = current, current = current.parent) {
    if (current.type === 'function_definition') return true;
    if (current.type === 'if_statement') {
      if (child.id === current.childForFieldName('condition')?.id || isMainGuard(current)) continue;
      if (child.type === 'elif_clause' || child.type === 'else_clause') return false;
      if (!defaultsTrue(current.childForFieldName('condition'), text)) return false;
    } else if (CONDITIONAL_PARENTS.has(current.type)) {
      return false;
    }
  }
  return true;
}

/** `FLAG` or `args.FLAG` where the file sets FLAG's default to a literal True. */
function defaultsTrue(condition: Node | null, text: string): boolean {
  const flag = condition?.type === 'identifier' ? condition.text : condition?.type === 'attribute' ? condition.childForFieldName('attribute')?.text : undefined;
  if (!flag || !/^\w+$/.test(flag)) return false;
  const option = flag.replace(/_/g, '[-_]');
  return new RegExp(`^[ \\t]*${flag}\\s*(?::\\s*bool\\s*)?=\\s*True\\b`, 'm').test(text) || new RegExp(`["']--${option}["'][^)]*?\\bdefault\\s*=\\s*True\\b`).test(text);
}
