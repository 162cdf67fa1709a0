// Draws from the process-wide generators of Python's `random` and NumPy's legacy `np.random.*`
// (neither is seeded by torch.manual_seed), and the calls that seed them.
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

/** Framework seeders that seed `random` and NumPy along with torch (seed_everything, set_seed...). */
const ALL_GENERATORS = [...TORCH_SEEDERS].filter((s) => !s.startsWith('torch.'));

/** Calls that seed each global generator. */
export const GLOBAL_SEEDERS = {
  random: new Set(['random.seed', ...ALL_GENERATORS]),
  numpy: new Set(['numpy.random.seed', ...ALL_GENERATORS]),
};

/** Which global generator a resolved callee draws from, if any. */
export function globalGenerator(resolved: string): 'random' | 'numpy' | undefined {
  return RANDOM_DRAWS.has(resolved) ? 'random' : NUMPY_GLOBAL_DRAWS.has(resolved) ? 'numpy' : undefined;
}
