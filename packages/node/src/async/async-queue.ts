/**
 * An unbounded queue for one consumer, used by the in-memory adapters' watches: `push` never
 * blocks, `next()` resolves with the next item, or undefined once the queue has ended.
 */
export class AsyncQueue<T> {
  readonly #items: T[] = [];
  #waiter: ((item: T | undefined) => void) | undefined;
  #ended = false;

  push(item: T): void {
    if (this.#ended) return;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter(item);
    else this.#items.push(item);
  }

  /** Drops what is queued; `next()` resolves undefined from now on. */
  end(): void {
    this.#ended = true;
    this.#items.length = 0;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(undefined);
  }

  next(): Promise<T | undefined> {
    const item = this.#items.shift();
    if (item !== undefined || this.#ended) return Promise.resolve(item);
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }
}
