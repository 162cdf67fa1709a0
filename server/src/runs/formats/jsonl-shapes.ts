// What the JSON Lines fast path saw of each slot's texts as it read them (jsonl-flat.ts), so that a
// series' precision is known without making its texts: in the terms of allRoundTrip (numbers.ts),
// a padded fraction ("1.500"), 17 or more significant digits (a writer that prints every digit a
// double needs), or a text whose round trip the digit count alone does not settle (16 digits, a
// subnormal, an underflow to zero).
import type { Points, Precision } from '../series.js';

export interface TextShapes {
  padded: boolean;
  long: boolean;
  unsure: boolean;
}

/** A text's kind: SHORT is ≤ 15 significant digits of a normal double, or zero: its shortest text. */
export const SHORT = 0;
export const LONG = 1;
export const PADDED = 2;
export const UNSURE = 3;

/** Notes a text of `kind` (anything but SHORT, which changes nothing) in `shape`. */
export function seen(shape: TextShapes, kind: number): void {
  if (kind === PADDED) shape.padded = true;
  else if (kind === LONG) shape.long = true;
  else shape.unsure = true;
}

/**
 * Per slot, not per name: one name can make several series (per rank, stepped and not) whose
 * precision the full parser judges apart.
 */
export class SlotShapes {
  private readonly shapes = new Map<Points, TextShapes>();

  of(slot: Points): TextShapes {
    let shape = this.shapes.get(slot);
    if (!shape) this.shapes.set(slot, (shape = { padded: false, long: false, unsure: false }));
    return shape;
  }

  /**
   * The precision of a series made of `parts` every value of which the fast path read, when the
   * shapes settle it: no padding, and either a 17-digit text (a repr writer) or only texts that are
   * their value's shortest form. Undefined when the texts must be looked at (padding to describe,
   * unsure texts, or a part the fast path never saw).
   */
  precisionOf(parts: readonly Points[], full: Precision): Precision | undefined {
    let long = false;
    let unsure = false;
    for (const part of parts) {
      const shape = this.shapes.get(part);
      if (!shape || shape.padded) return undefined;
      long ||= shape.long;
      unsure ||= shape.unsure;
    }
    return long || !unsure ? full : undefined;
  }
}
