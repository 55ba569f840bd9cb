/** An item of a CallList: the links are the list's (set and cleared by it only). */
export interface Listed<T> {
  prevListed: T | undefined;
  nextListed: T | undefined;
}

/**
 * The calls in flight on a connection, as a doubly linked list through the calls themselves,
 * instead of a Set. A Set that adds and deletes a call per stream rehashes its table every few
 * dozen calls; once that table is in the old generation (a mark-compact promotes it, as it does
 * every live object), V8 allocates each new table there too and the table it replaces keeps the
 * entries it held. Every call in flight at a rehash is then reachable from old garbage and
 * survives each scavenge until the next mark-compact, with all it references (measured: a Map or
 * Set churned so promotes about half of what the load allocates; the cache's Get load promoted
 * every Call). A list whose removals clear the links allocates nothing and holds no call after
 * its close.
 */
export class CallList<T extends Listed<T>> {
  private head: T | undefined = undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(item: T): void {
    item.prevListed = undefined;
    item.nextListed = this.head;
    if (this.head !== undefined) this.head.prevListed = item;
    this.head = item;
    this.count++;
  }

  /** Takes `item` out (nothing when it is not in the list). */
  remove(item: T): void {
    if (item.prevListed === undefined && this.head !== item) return;
    if (item.prevListed !== undefined) item.prevListed.nextListed = item.nextListed;
    else this.head = item.nextListed;
    if (item.nextListed !== undefined) item.nextListed.prevListed = item.prevListed;
    item.prevListed = item.nextListed = undefined;
    this.count--;
  }

  /** Calls `visit` on each item; `visit` may remove the item it is given. */
  forEach(visit: (item: T) => void): void {
    let item = this.head;
    while (item !== undefined) {
      const next = item.nextListed;
      visit(item);
      item = next;
    }
  }
}
