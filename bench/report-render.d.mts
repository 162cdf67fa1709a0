/** Types for report-render.mjs, which test/unit/bench-report.test.ts imports. */
export declare const SUPER_LINEAR: number;
export declare function median(xs: number[]): number;
export declare function renderResults(results: unknown): string;
export declare function renderPart(part: unknown, summary?: string[][]): string;
