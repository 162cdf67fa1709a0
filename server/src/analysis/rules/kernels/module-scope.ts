// Module-level lookups the core's ValueHints does not do: it resolves a name only within the scope
// where it is used, so a module constant (`CONFIGS = [...]`, `KERNEL_SRC = r"""..."""`) read inside
// a function is unknown to it. Shared by the kernel and attention rules; the lookup itself lives in
// syntax.ts, where the core's defaults (defaults.ts) read it too.
import { moduleValue, rootOf } from '../../syntax.js';

export { moduleValue, rootOf };
