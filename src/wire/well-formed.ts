/**
 * `String.prototype.isWellFormed`/`toWellFormed` exist on Node 20 (V8 11.3) but are typed only
 * in the ES2024 lib, which this project does not target. These wrappers are internal to wire.
 */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Whether `text` has no unpaired UTF-16 surrogate. */
export function isWellFormed(text: string): boolean {
  return (text as unknown as WellFormedString).isWellFormed();
}

/** `text` with every unpaired surrogate replaced by U+FFFD. */
export function toWellFormed(text: string): string {
  return (text as unknown as WellFormedString).toWellFormed();
}
