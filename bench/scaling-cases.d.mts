/** Types for scaling-cases.mjs, which test/unit/linear.test.ts imports. */
export declare const SCALING_CASES: Record<string, (k: number) => string>;
