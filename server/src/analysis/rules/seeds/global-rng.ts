// Draws from the process-wide generators of Python's `random` and NumPy's legacy `np.random.*`
// (neither is seeded by torch.manual_seed), from torch's default CPU generator (which the process
// seeds from OS entropy: `torch.initial_seed()` differs in every fresh process), and the calls that
// seed them.
import type { Node } from 'web-tree-sitter';
import { callArguments } from '../../syntax.js';
import { TORCH_SEEDERS } from './value-kinds.js';

/** `random` module functions that draw from its hidden global `Random` instance. */
export const RANDOM_DRAWS = new Set(
  ['random', 'randint', 'randrange', 'getrandbits', 'choice', 'choices', 'uniform', 'sample', 'shuffle', 'randbytes', 'gauss', 'normalvariate', 'triangular', 'betavariate', 'expovariate', 'gammavariate', 'lognormvariate', 'vonmisesvariate', 'paretovariate', 'weibullvariate'].map((n) => `random.${n}`),
);

/** numpy.random module functions that draw from the legacy global generator. */
export const NUMPY_GLOBAL_DRAWS = new Set(
  [
    'rand', 'randn', 'randint', 'random', 'random_sample', 'ranf', 'sample', 'random_integers', 'uniform', 'normal',
    'standard_normal', 'choice', 'shuffle', 'permutation', 'beta', 'binomial', 'poisson', 'exponential', 'gamma',
    'laplace', 'lognormal', 'logistic', 'multinomial', 'multivariate_normal', 'dirichlet', 'geometric', 'triangular',
    'standard_exponential', 'standard_gamma', 'standard_t', 'chisquare', 'f', 'gumbel', 'hypergeometric', 'pareto',
    'power', 'rayleigh', 'vonmises', 'wald', 'weibull', 'zipf', 'bytes', 'negative_binomial', 'noncentral_chisquare',
    'noncentral_f', 'logseries', 'standard_cauchy',
  ].map((name) => `numpy.random.${name}`),
);

/**
 * torch factories that draw from the default CPU generator when given no `generator=` and no
 * `device=` (a CUDA draw uses the device's generator, not measured here).
 */
export const TORCH_GLOBAL_DRAWS = new Set(
  ['randint', 'rand', 'randn', 'randperm', 'randint_like', 'rand_like', 'randn_like', 'normal', 'bernoulli', 'multinomial', 'poisson'].map((name) => `torch.${name}`),
);

/** Framework seeders that seed `random` and NumPy along with torch (seed_everything, set_seed...). */
const ALL_GENERATORS = [...TORCH_SEEDERS].filter((s) => !s.startsWith('torch.'));

/** Calls that seed each global generator. */
export const GLOBAL_SEEDERS = {
  random: new Set(['random.seed', ...ALL_GENERATORS]),
  numpy: new Set(['numpy.random.seed', ...ALL_GENERATORS]),
  torch: TORCH_SEEDERS,
};

/** Which global generator a resolved callee draws from, if any. */
export function globalGenerator(resolved: string): 'random' | 'numpy' | undefined {
  return RANDOM_DRAWS.has(resolved) ? 'random' : NUMPY_GLOBAL_DRAWS.has(resolved) ? 'numpy' : undefined;
}

/** `torch.randint(lo, hi, (1,))`: a draw from torch's default CPU generator (no generator or device given). */
export function torchGlobalDraw(resolved: string, call: Node): boolean {
  if (!TORCH_GLOBAL_DRAWS.has(resolved)) return false;
  const args = callArguments(call);
  return !args.hasSplat && !args.keywords.has('generator') && !args.keywords.has('device');
}
