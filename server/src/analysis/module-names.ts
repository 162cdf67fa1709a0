// Python module names of a project's files, and relative import names made absolute, for the
// project's own aliases of torch names (project-aliases.ts, scope.ts).

/** `pkg/layers/wrappers.py` → `pkg.layers.wrappers`, `pkg/layers/__init__.py` → `pkg.layers`. */
export function moduleOfPath(relative: string): { module: string; isPackage: boolean } | undefined {
  const parts = relative.split(/[\\/]/);
  if (parts.some((p) => p === '..' || p === '' || p === '.') || !/\.py$/.test(parts.at(-1)!)) return undefined;
  const last = parts.pop()!.replace(/\.py$/, '');
  const isPackage = last === '__init__';
  if (!isPackage) parts.push(last);
  return parts.length && parts.every((p) => /^[A-Za-z_]\w*$/.test(p)) ? { module: parts.join('.'), isPackage } : undefined;
}

/** `..layers.interpolate` read in `module` → `pkg.layers.interpolate`; absolute names are kept. */
export function absoluteName(name: string, module: string | undefined, isPackage = false): string | undefined {
  const dots = /^\.*/.exec(name)![0].length;
  if (dots === 0) return name;
  if (!module) return undefined;
  const base = module.split('.');
  const keep = base.length - (isPackage ? dots - 1 : dots);
  if (keep < 1) return undefined;
  const rest = name.slice(dots);
  return [...base.slice(0, keep), ...(rest ? [rest] : [])].join('.');
}
