import type { Node } from 'web-tree-sitter';
import { callArguments, literalValue, rangeOf } from '../../syntax.js';
import { inRange } from '../../version.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { methodName, ownDescendants, resolvedCallee, scopeOf } from '../seeds/shared.js';
import { ENV_CALLS, envHooks, EnvWrite } from '../../env.js';

type Event = 'distributed' | 'cuda' | 'te';

/** Which earlier events make a write of each variable come too late, and who reads it when. */
const VARIABLES: Record<string, { events: Event[]; reader: string }> = {
  NCCL_ALGO: { events: ['distributed'], reader: 'NCCL reads it when it creates a communicator' },
  CUBLAS_WORKSPACE_CONFIG: { events: ['cuda'], reader: 'cuBLAS reads it once, when PyTorch creates its first cuBLAS handle at the first CUDA matmul' },
  NVTE_ALLOW_NONDETERMINISTIC_ALGO: { events: ['te', 'cuda'], reader: 'Transformer Engine reads it when its attention modules are constructed' },
};

/** Calls after which NCCL communicators may exist (init with device_id, DDP's broadcast, collectives). */
const DISTRIBUTED = new Set([
  'torch.distributed.init_process_group', 'torch.distributed.device_mesh.init_device_mesh', 'torch.distributed.init_device_mesh',
  'torch.nn.parallel.DistributedDataParallel', 'torch.distributed.fsdp.FullyShardedDataParallel', 'deepspeed.init_distributed',
  'deepspeed.initialize', 'accelerate.Accelerator', 'torch.distributed.barrier', 'torch.distributed.all_reduce',
  'torch.distributed.broadcast', 'torch.distributed.all_gather', 'torch.distributed.reduce_scatter',
  'torch.distributed.all_gather_into_tensor', 'torch.distributed.reduce_scatter_tensor', 'torch.distributed.new_group',
  'megatron.training.initialize_megatron', 'megatron.training.initialize.initialize_megatron',
  'megatron.core.parallel_state.initialize_model_parallel',
]);

/** torch.cuda functions that start CUDA work (queries and lazily queued seeding do not). */
const CUDA_STARTERS = new Set(['init', 'set_device', 'synchronize', 'current_stream', 'Stream', 'Event', 'CUDAGraph', 'graph', 'make_graphed_callables', 'mem_get_info']);

function isCudaString(node: Node | undefined): boolean {
  const value = literalValue(node ?? null);
  return typeof value === 'string' && /^cuda(:\d+)?$/.test(value);
}

/** What an earlier call does, if it is one of the events. */
function eventOf(call: Node, ctx: RuleContext): { event: Event; text: string } | undefined {
  const resolved = resolvedCallee(call, ctx);
  const text = call.text.length > 60 ? `${call.text.slice(0, 57)}...` : call.text;
  if (resolved !== undefined) {
    if (DISTRIBUTED.has(resolved)) return { event: 'distributed', text };
    if (resolved.startsWith('transformer_engine.')) return { event: 'te', text };
    if (resolved.startsWith('torch.cuda.') && CUDA_STARTERS.has(resolved.slice('torch.cuda.'.length))) return { event: 'cuda', text };
  }
  const method = methodName(call, ctx);
  const args = callArguments(call);
  if (method === 'cuda') return { event: 'cuda', text };
  if (method === 'to' && (isCudaString(args.positional[0]) || isCudaString(args.keywords.get('device')))) return { event: 'cuda', text };
  // torch.randn(..., device="cuda"), model = Net().to(device="cuda")
  if (isCudaString(args.keywords.get('device')) && resolved?.startsWith('torch.')) return { event: 'cuda', text };
  return undefined;
}

/** The first earlier call in the same function (or module body) that is an event of one of `events`. */
function earlierEvent(write: EnvWrite, events: Event[], ctx: RuleContext): { event: Event; call: Node; text: string } | undefined {
  const scope = scopeOf(write.node);
  const body = scope.type === 'module' ? scope : scope.childForFieldName('body');
  if (!body) return undefined;
  for (const call of ownDescendants(body, 'call')) {
    if (call.startIndex >= write.node.startIndex) break;
    const found = eventOf(call, ctx);
    if (found && events.includes(found.event)) return { ...found, call };
  }
  return undefined;
}

function check(write: EnvWrite, ctx: RuleContext): void {
  const spec = VARIABLES[write.name];
  if (!spec) return;
  // From torch 2.11 deterministic mode no longer needs CUBLAS_WORKSPACE_CONFIG (BX206 says so).
  if (write.name === 'CUBLAS_WORKSPACE_CONFIG' && inRange(ctx.torchVersion, '>=2.11')) return;
  const found = earlierEvent(write, spec.events, ctx);
  if (!found) return;
  const line = rangeOf(found.call).start.line + 1;
  const what = {
    distributed: 'NCCL communicators may already exist',
    cuda: 'CUDA work has already started',
    te: 'Transformer Engine modules are already built',
  }[found.event];
  const message = fitMessage(`${write.name} is set after \`${found.text}\` (line ${line}), so it may never take effect`, `${write.name} is set after line ${line}, so it may never take effect`);
  const named = message.includes(found.text);
  ctx.report({
    node: write.node,
    guard: 'none',
    outcomes: always(
      'warning',
      message,
      `${named ? '' : `Line ${line} calls \`${found.text}\`. `}By then ${what}, and ${spec.reader}, so the run silently keeps the setting it started with. Set it at the top of the entry point, before that call, or in the launcher.`,
    ),
  });
}

const rule: Rule = {
  id: 'BX602',
  name: 'env-set-too-late',
  family: 'distributed',
  defaultSeverity: 'warning',
  summary: 'A determinism environment variable is set after the library that reads it has started (process group, CUDA work, Transformer Engine modules).',
  facts: [
    { torch: '', source: 'docs', text: "Megatron-LM's determinism helpers note that these variables are captured at first use: NCCL at communicator creation, cuBLAS at handle creation, Transformer Engine at its first attention module, so they must be set before any of those" },
    { torch: '<2.11', source: 'docs', text: 'cuBLAS fixes its workspace configuration when the first handle is created; a later change to CUBLAS_WORKSPACE_CONFIG passes PyTorch\'s check but does not change the workspaces in use' },
  ],
  triggers: Object.keys(VARIABLES),
  calls: ENV_CALLS,
  ...envHooks(new Set(Object.keys(VARIABLES)), check),
  docs: `
Several switches that decide reproducibility are environment variables read **once**, by a library
that caches what it saw:

| variable | read when | events that make a later write suspect |
|---|---|---|
| \`NCCL_ALGO\` | NCCL creates a communicator | \`init_process_group\`, \`init_device_mesh\`, DDP/FSDP construction (they broadcast), collectives, \`deepspeed.init_distributed\`, \`Accelerator()\` |
| \`CUBLAS_WORKSPACE_CONFIG\` | PyTorch creates its first cuBLAS handle (first CUDA matmul) | \`.cuda()\`, \`.to("cuda")\`, \`device="cuda"\` on a torch call, \`torch.cuda.set_device\` / \`init\` / \`synchronize\` / streams and graphs (not queries, not the lazily applied \`torch.cuda.manual_seed*\`) |
| \`NVTE_ALLOW_NONDETERMINISTIC_ALGO\` | Transformer Engine attention modules are constructed | calls into \`transformer_engine\`, CUDA work (the model is usually built by then) |

Writing the variable after such an event is a silent no-op when the library has already read it:
the run proceeds with the default, possibly nondeterministic, setting while the code suggests
otherwise. Megatron-LM's \`megatron/training/determinism.py\` states the same constraint and calls
its environment helper first thing in argument validation for that reason.

The check is per function (or per module body) and follows statement order: the event has to
appear earlier in the same body as the write. NCCL creates communicators lazily unless
\`init_process_group\` gets a \`device_id\`, and cuBLAS only at the first matmul, so some writes it
reports still happen to work, but they depend on nothing in between ever changing; the reliable
place is the top of the entry point or the launcher. From torch 2.11 on,
\`CUBLAS_WORKSPACE_CONFIG\` is no longer needed by deterministic mode (see BX206) and is not
checked here.

\`\`\`python
dist.init_process_group("nccl")
os.environ["NCCL_ALGO"] = "Ring"        # BX602: communicators may already exist

os.environ.setdefault("NCCL_ALGO", "Ring")   # fine: before the process group
dist.init_process_group("nccl")
\`\`\`
`,
};
export default rule;
