/** Counts in words: "1 delivery", "2 deliveries", "0 attempts". */

/** `n` and the noun that fits it (`many` defaults to `one` + "s"); thousands are grouped. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
