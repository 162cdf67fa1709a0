// The one way a measured slowdown is written, in findings' details, facts and rule pages alike, so
// the same measurement never reads "4.3×" in one place and "4.26×" in another
// (test/unit/messages.test.ts holds the docs and facts to it).

/** Below this ratio the deterministic path is within the measurement noise of the shared H200. */
export const NOISE_RATIO = 1.2;

/** A measured time ratio: one decimal below 10 (4.26 → "4.3×"), whole numbers above (21.96 → "22×"). */
export function formatSlowdown(ratio: number): string {
  return `${ratio < 10 ? ratio.toFixed(1) : Math.round(ratio).toString()}×`;
}

/** "4.3× slower on an H200, torch 2.11", or "no measurable cost …" within the noise. */
export function costOnH200(ratio: number, torch = '2.11'): string {
  return ratio < NOISE_RATIO ? `no measurable cost on an H200, torch ${torch}` : `${formatSlowdown(ratio)} slower on an H200, torch ${torch}`;
}
