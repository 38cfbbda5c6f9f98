/**
 * A min-heap of timed items for virtual-time simulation. Ties break by insertion order, so a
 * simulation is deterministic.
 */

interface Entry<T> {
  readonly atMs: number;
  readonly seq: number;
  readonly item: T;
}

/** A priority queue ordered by time, then insertion order. */
export class EventQueue<T> {
  private readonly heap: Entry<T>[] = [];
  private seq = 0;

  /** Number of queued items. */
  get size(): number {
    return this.heap.length;
  }

  /** Time of the earliest item, or undefined when empty. */
  peekTime(): number | undefined {
    return this.heap[0]?.atMs;
  }

  /** Adds an item due at `atMs`. */
  push(atMs: number, item: T): void {
    const heap = this.heap;
    heap.push({ atMs, seq: this.seq++, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  /** Removes and returns the earliest item. */
  pop(): { atMs: number; item: T } | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        swap(heap, i, m);
        i = m;
      }
    }
    return { atMs: top.atMs, item: top.item };
  }
}

function before<T>(a: Entry<T> | undefined, b: Entry<T> | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

function swap<T>(heap: Entry<T>[], i: number, j: number): void {
  const a = heap[i];
  const b = heap[j];
  if (a === undefined || b === undefined) return;
  heap[i] = b;
  heap[j] = a;
}
