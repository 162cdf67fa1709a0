// What the 3xx (seeds and data order) and 6xx (environment) rules share: builtin calls found through
// the text (`hash`, `set`, `sorted`: the engine does not dispatch them), the scope a node belongs to,
// and where an ordered value ends up (sorted, counted, looped over, stored under a name). Rules
// that read the whole tree or statement order do it from Rule.onFile.
export * from './file-scan.js';
export * from './order-use.js';
export * from './value-kinds.js';
