/**
 * A Map that forgets its oldest entry beyond `capacity` (a Map keeps insertion order; setting a
 * key again makes it the newest). For in-process memories that must not grow for ever.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly #capacity: number;

  constructor(capacity: number) {
    super();
    this.#capacity = capacity;
  }

  override set(key: K, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.#capacity) this.delete(this.keys().next().value as K);
    return this;
  }

  /** Get and forget. */
  take(key: K): V | undefined {
    const value = this.get(key);
    this.delete(key);
    return value;
  }
}
