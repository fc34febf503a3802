/**
 * Keyset cursors (docs/behaviour.md#keyset-cursors): base64url of the last
 * item's sort key and id. Anything that does not decode to a position of the
 * list is `null`, which the lists turn into an empty page.
 */

/** A decoded position. */
export interface CursorPosition {
  readonly sortKey: string;
  readonly id: string;
}

/** Encodes a position. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.sortKey, position.id]), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor, accepting only ids that match `idPattern` (the list's own
 * id shape), so a cursor of another list addresses no position.
 */
export function decodeCursor(cursor: string, idPattern: RegExp): CursorPosition | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [sortKey, id] = value as unknown[];
    if (typeof sortKey !== 'string' || typeof id !== 'string' || !idPattern.test(id)) return null;
    return { sortKey, id };
  } catch {
    return null;
  }
}
