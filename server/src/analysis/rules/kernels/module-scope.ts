// Module-level lookups the core's ValueHints does not do: it resolves a name only within the scope
// where it is used, so a module constant (`CONFIGS = [...]`, `KERNEL_SRC = r"""..."""`) read inside
// a function is unknown to it. Shared by the kernel and attention rules.
import type { Node } from 'web-tree-sitter';
import { rootOf } from '../../syntax.js';

export { rootOf };

/** The value of the last `NAME = ...` statement at module level, if any. */
export function moduleValue(identifier: Node): Node | undefined {
  let found: Node | undefined;
  for (const statement of rootOf(identifier).namedChildren) {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (assignment?.type !== 'assignment') continue;
    const left = assignment.childForFieldName('left');
    if (left?.type === 'identifier' && left.text === identifier.text) found = assignment.childForFieldName('right') ?? undefined;
  }
  return found;
}
