// Small helpers to build the page from data. Text always goes in as text nodes, never as HTML:
// an event's last error or a customer id can contain anything.

type Attributes = Record<string, string | boolean | undefined | ((event: Event) => void)>;
type Child = Node | string | number | null | undefined | false;

/** `h('td', { class: 'age' }, '3 s')`: an element with attributes, listeners (`on…`) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (typeof value === 'string') element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'number' ? String(child) : child);
  }
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** "4 s", "2 min 5 s", "1 h 3 min": ages a person reads at a glance. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function secondsSince(iso: string): number {
  return (Date.now() - Date.parse(iso)) / 1000;
}

/** The first 8 characters of a UUID: enough to tell rows apart on screen. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function formatMoney(cents: string, currency: string): string {
  return `${(Number(cents) / 100).toFixed(2)} ${currency}`;
}
