// Distances in units in the last place between two values, for the report and the chart: how far
// apart two runs' floats are, counted in representable numbers.

const view = new DataView(new ArrayBuffer(8));

/** Representable float32 values between a and b (both must be float32 numbers). */
export function ulpDistance32(a: number, b: number): number {
  const ordered = (x: number): number => {
    view.setFloat32(0, x);
    const i = view.getInt32(0);
    return i < 0 ? -2147483648 - i : i;
  };
  return Math.abs(ordered(a) - ordered(b));
}

/**
 * Representable doubles between a and b: the difference of their bit patterns read as sign and
 * magnitude, in two 32-bit halves (exact up to 2^53, rounded once above, as Number(bigint) would be).
 */
export function ulpDistance64(a: number, b: number): number {
  view.setFloat64(0, a);
  const aNegative = view.getUint32(0) >>> 31 === 1;
  const aHigh = view.getUint32(0) & 0x7fffffff;
  const aLow = view.getUint32(4);
  view.setFloat64(0, b);
  const bNegative = view.getUint32(0) >>> 31 === 1;
  const bHigh = view.getUint32(0) & 0x7fffffff;
  const bLow = view.getUint32(4);
  // Opposite signs: the distance runs through zero, so the magnitudes add.
  if (aNegative !== bNegative) return (aHigh + bHigh) * 2 ** 32 + (aLow + bLow);
  return Math.abs((aHigh - bHigh) * 2 ** 32 + (aLow - bLow));
}
