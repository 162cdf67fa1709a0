// Whether code runs with gradients off: backward-only hazards (gather, index_select, pooling
// backward...) cannot happen under `with torch.no_grad():`, in an `@torch.inference_mode()` function,
// inside a custom `torch.autograd.Function`'s forward or backward (autograd records nothing there:
// the Function's own backward decides), in a torchvision transform (data augmentation) or a dataset's methods, in generation, sampling and decoding functions, and in the
// hooks that adapt a checkpoint while it loads (`checkpoint_filter_fn`, `load_state_dict` hooks).
import type { Node } from 'web-tree-sitter';
import { parentOf } from './parents.js';
import type { ImportScope } from './scope.js';
import { contradictsTrainingAssert } from './training-asserts.js';

/**
 * Signs that a file trains: a backward call, an optimizer, a Trainer, `.train()`. A program trains
 * when one of its files on the training path shows them (program.ts programTrains); backward-only
 * hazards in a model file it imports then run.
 */
const TRAINING_SIGNS = /\.backward\(|\b(Trainer|SFTTrainer|DPOTrainer|GRPOTrainer|TrainingArguments|Seq2SeqTrainer|Accelerator)\b|\boptim\.|\.train\(\)|\bget_peft_model\b/;

export function showsTraining(text: string): boolean {
  return TRAINING_SIGNS.test(text);
}

/** Signs that a file serves a model: it generates, or runs under inference mode or no_grad. */
const SERVING_SIGNS = /\.generate\(|\binference_mode\b|\bno_grad\b/;

/**
 * A file that serves a model and shows no training of its own (an inference backend): another
 * file's training does not make its model settings training ones.
 */
export function onlyServes(text: string): boolean {
  return SERVING_SIGNS.test(text) && !showsTraining(text);
}

const NO_GRAD = new Set(['torch.no_grad', 'torch.inference_mode', 'torch.autograd.no_grad', 'torch.autograd.grad_mode.no_grad']);

export function runsWithoutGrad(node: Node, scope: ImportScope): boolean {
  // Recomputed under enable_grad and differentiated on the spot: its backward runs, even in a backward.
  if (differentiatedHere(node, scope)) return false;
  for (let current = parentOf(node), child = node; current; child = current, current = parentOf(current)) {
    const parent = parentOf(current);
    if (current.type === 'block' && assertsNoGradBefore(current, child)) return true;
    if (current.type === 'block' && contradictsTrainingAssert(current)) return true;
    if (current.type === 'block' && parent?.type === 'if_statement' && parent.childForFieldName('consequence')?.id === current.id) {
      if (assertsInference(parent.childForFieldName('condition'))) return true;
    } else if (current.type === 'block' && parent?.type === 'else_clause' && parentOf(parent)?.type === 'if_statement') {
      // `if inference_params is None: <train> else: <decode>`; an `elif` chain has conditions of its own.
      const statement = parentOf(parent)!;
      if (!statement.namedChildren.some((c) => c.type === 'elif_clause') && assertsTraining(statement.childForFieldName('condition'))) return true;
    } else if (current.type === 'with_statement') {
      const clause = current.namedChildren.find((c) => c.type === 'with_clause');
      for (const item of clause?.namedChildren ?? []) {
        if (item.type === 'with_item' && isNoGradExpression(item.childForFieldName('value'), scope)) return true;
      }
    } else if (current.type === 'function_definition') {
      const name = current.childForFieldName('name')?.text ?? '';
      if (NO_BACKWARD_NAME.test(name) || BACKWARD_NAME.test(name) || (AUTOGRAD_METHODS.has(name) && methodOf(current, scope, AUTOGRAD_FUNCTION))) return true;
      if (methodOf(current, scope, DATA_TRANSFORM) || methodOf(current, scope, DATASET)) return true;
      const decorated = parentOf(current);
      if (decorated?.type !== 'decorated_definition') return false;
      return decorated.namedChildren.some(
        (d) => d.type === 'decorator' && isNoGradExpression(d.namedChildren[0] ?? null, scope),
      );
    }
  }
  return false;
}

/**
 * Functions that generate, sample or decode: inference code, never differentiated. Spatial and
 * statistical sampling is differentiated (`_apply_pos_embed_grid_sample`, `point_sample`,
 * `importance_sampling_loss`), so `sample` after those words does not count.
 */
const NO_BACKWARD_NAME = /^_*(generate|sample|decode|greedy|beam_search|speculative|infer|inference|predict)(_|$)|_(generate|generation|decode|decoding|prefill|inference)(_|$)|(?<!grid|point|importance|up|down|sub)_(sample|sampling)(_|$)|(^|_)(checkpoint_filter_fn|filter_fn|load_state_dict|load_from_state_dict|state_dict_pre_hook|state_dict_hook|load_pretrained|load_checkpoint)$/i;
/**
 * Backward functions (`backward`, `_attn_bwd`, `scatter_add_backward`): autograd calls them with
 * gradient recording off, so what they call has no backward of its own.
 */
const BACKWARD_NAME = /^_*(backward|bwd)$|_(backward|bwd)$/;
/**
 * Branches that run only when decoding or not training: `if is_decoding:`, `if not self.training:`.
 * A `decoder` is a part of the model (`if self.decoder[f] is None:` picks a layer), not decoding.
 */
const INFERENCE_CONDITION = /\b(is_)?decod(?!er)\w*|\binference\w*|\bnot\s+self\.training\b|\buse_cache\b|\bis_generating\b/;
/**
 * Does a condition hold only when decoding or not training? `if inference_params is not None:` and
 * `if use_cache and x:` do; `if inference_params is None:` (the training branch) and
 * `if training or use_cache:` do not.
 */
function assertsInference(condition: Node | null): boolean {
  if (!condition) return false;
  switch (condition.type) {
    case 'parenthesized_expression':
      return assertsInference(condition.namedChildren[0] ?? null);
    case 'boolean_operator': {
      const left = assertsInference(condition.childForFieldName('left'));
      const right = assertsInference(condition.childForFieldName('right'));
      return condition.childForFieldName('operator')?.text === 'and' ? left || right : left && right;
    }
    case 'not_operator':
      return /^self\.training$|^training$/.test(condition.childForFieldName('argument')?.text ?? '');
    case 'comparison_operator': {
      // `x is None` / `x == None`: the inference input is absent, the training branch.
      const operators = condition.children.filter((c) => !c.isNamed).map((c) => c.text).join(' ');
      if (condition.namedChildren[1]?.type === 'none' && !/not|!=/.test(operators)) return false;
      return INFERENCE_CONDITION.test(condition.namedChildren[0]?.text ?? '');
    }
    default:
      return INFERENCE_CONDITION.test(condition.text);
  }
}
/**
 * Does a condition hold only when training, so that its `else` runs only when decoding?
 * `if inference_params is None:`, `if not use_cache:`, `if self.training:`.
 */
function assertsTraining(condition: Node | null): boolean {
  if (!condition) return false;
  switch (condition.type) {
    case 'parenthesized_expression':
      return assertsTraining(condition.namedChildren[0] ?? null);
    case 'boolean_operator': {
      // The else of `a or b` runs when neither holds, that of `a and b` when either fails.
      const left = assertsTraining(condition.childForFieldName('left'));
      const right = assertsTraining(condition.childForFieldName('right'));
      return condition.childForFieldName('operator')?.text === 'or' ? left || right : left && right;
    }
    case 'not_operator':
      return assertsInference(condition.childForFieldName('argument'));
    case 'comparison_operator': {
      const operators = condition.children.filter((c) => !c.isNamed).map((c) => c.text).join(' ');
      const absent = condition.namedChildren[1]?.type === 'none' && !/not|!=/.test(operators);
      return absent && INFERENCE_CONDITION.test(condition.namedChildren[0]?.text ?? '');
    }
    default:
      return /^self\.training$/.test(condition.text);
  }
}
/**
 * `assert kv.requires_grad is False` (`== False`, `assert not kv.requires_grad`) earlier in the
 * block: the code below it runs only where no gradient is recorded (a decoding branch that checks it
 * is never used in training), or the assert stops the program.
 */
const ASSERTS_NO_GRAD = /^assert\s+(not\s+[\w.\[\]]+\.requires_grad|[\w.\[\]]+\.requires_grad\s*(is|==)\s*False)\b/;

/** Per tree: does it hold such an assert at all (most files do not, and skip the block scans)? */
const treesWithAsserts = new WeakMap<object, boolean>();

function assertsNoGradBefore(block: Node, child: Node): boolean {
  let any = treesWithAsserts.get(block.tree);
  if (any === undefined) treesWithAsserts.set(block.tree, (any = block.tree.rootNode.descendantsOfType('assert_statement').some((a) => ASSERTS_NO_GRAD.test(a.text))));
  if (!any) return false;
  for (const statement of block.namedChildren) {
    if (statement.startIndex >= child.startIndex) return false;
    if (statement.type === 'assert_statement' && ASSERTS_NO_GRAD.test(statement.text)) return true;
  }
  return false;
}

const AUTOGRAD_METHODS = new Set(['forward', 'backward', 'setup_context', 'jvp', 'vjp']);
const AUTOGRAD_FUNCTION = /^torch\.autograd(\.function)?\.(Function|InplaceFunction)$/;
/**
 * torchvision's transform base classes: their subclasses augment data samples in the loader, which
 * carry no gradient (`torch.distributions.Transform`, differentiated, is another class).
 */
const DATA_TRANSFORM = /^torchvision\.transforms(\.v2)?\.Transform$/;
/**
 * Dataset base classes: their methods (`__getitem__`, a graph dataset's `process`) load and prepare
 * samples in the loader or once before training, with no gradient recorded for anything they compute.
 */
const DATASET = /^(torch\.utils\.data(\.dataset)?\.(Dataset|IterableDataset)|torch_geometric\.data(\.(in_memory_)?dataset)?\.(Dataset|InMemoryDataset))$/;

/** A method of a class deriving directly from a base `base` matches (torch.autograd.Function, a torchvision Transform). */
function methodOf(method: Node, scope: ImportScope, base: RegExp): boolean {
  let node: Node | null = method.parent;
  if (node?.type === 'decorated_definition') node = node.parent;
  const klass = node?.type === 'block' ? node.parent : null;
  if (klass?.type !== 'class_definition') return false;
  const bases = klass.childForFieldName('superclasses')?.namedChildren ?? [];
  return bases.some((b) => base.test(scope.resolveExpression(b) ?? ''));
}

function isNoGradExpression(node: Node | null, scope: ImportScope): boolean {
  if (!node) return false;
  const target = node.type === 'call' ? node.childForFieldName('function') : node;
  const qualified = target ? scope.resolveExpression(target) : undefined;
  if (qualified === undefined || !NO_GRAD.has(qualified)) return false;
  // torch.inference_mode(False) / no_grad is argument-free; a literal False turns it off.
  const first = node.type === 'call' ? node.childForFieldName('arguments')?.namedChildren[0] : undefined;
  return first?.type !== 'false';
}

const ENABLE_GRAD = new Set(['torch.enable_grad', 'torch.autograd.enable_grad', 'torch.autograd.grad_mode.enable_grad']);
const GRAD_CALLS = new Set(['torch.autograd.grad', 'torch.autograd.backward']);

/**
 * Is the node differentiated where it stands: inside `with torch.enable_grad():` whose body also
 * takes gradients (`torch.autograd.grad(...)`, `torch.autograd.backward(...)`, `x.backward(...)`)?
 * A custom Function's backward that recomputes its forward so (activation recomputation, a
 * context-parallel attention's backward) runs the recomputed ops' backward right there, whatever
 * its name says.
 */
export function differentiatedHere(node: Node, scope: ImportScope): boolean {
  for (let current = parentOf(node); current; current = parentOf(current)) {
    if (current.type === 'function_definition') return false;
    if (current.type !== 'with_statement') continue;
    const clause = current.namedChildren.find((c) => c.type === 'with_clause');
    const enables = clause?.namedChildren.some((item) => {
      const value = item.type === 'with_item' ? item.childForFieldName('value') : null;
      const target = value?.type === 'call' ? value.childForFieldName('function') : value;
      return !!target && ENABLE_GRAD.has(scope.resolveExpression(target) ?? '');
    });
    if (!enables) continue;
    return current.descendantsOfType('call').some((call) => {
      const target = call.childForFieldName('function');
      if (!target) return false;
      if (GRAD_CALLS.has(scope.resolveExpression(target) ?? '')) return true;
      return target.type === 'attribute' && target.childForFieldName('attribute')?.text === 'backward';
    });
  }
  return false;
}
