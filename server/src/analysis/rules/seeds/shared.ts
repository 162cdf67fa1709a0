// What the 3xx (seeds and data order) and 6xx (environment) rules share: a once-per-file hook for
// rules that need the whole tree, builtin calls (`hash`, `set`, `sorted`: the engine does not
// dispatch them), the scope a node belongs to, and where an ordered value ends up (sorted, counted,
// looped over, stored under a name).
//
// The core dispatches rules by resolved callee and by assignment only. Rules that look at builtins
// or at statement order use `wholeFile`: the first dispatched call or assignment of a file runs
// the scan once for that file (RuleContext is created per analysed tree).
export * from './file-scan.js';
export * from './order-use.js';
export * from './value-kinds.js';
