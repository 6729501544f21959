/** A tiny element builder: the whole UI is made of these calls, no framework. */
export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined | ((e: Event) => void);
export type Attrs = Record<string, AttrValue>;

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) for (const c of child) append(parent, c);
  else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

function apply(el: Element, attrs: Attrs | null | undefined): void {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (typeof value === "function") el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(key, String(value));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export const when = (ms: number | null | undefined): string => (ms ? new Date(ms).toLocaleString() : "never");

/** A heading and the list under it, one item a line. */
export const titledList = (title: string, items: Child[]) => [
  h("h4", null, title),
  h(
    "ul",
    null,
    items.map((item) => h("li", null, item)),
  ),
];

/** An error in words, announced as it appears (`role="alert"`). */
export const alertLine = (text: string, tag: "p" | "span" | "li" = "p") => h(tag, { class: "error", role: "alert" }, text);

/** A labelled button; `label` is its accessible name when the visible text is a symbol. */
export const button = (text: string, onClick: (e: Event) => void, extra: Attrs = {}) => h("button", { type: "button", onclick: onClick, ...extra }, text);

/**
 * For a list that reloads on demand (a search, a refresh after a change): each call starts a load and returns
 * whether that load is still the newest, so an older answer arriving late never overwrites a newer one.
 * `busy` carries aria-busy="true" from the start of a load until the newest one is checked on its way in,
 * so assistive technology (and a test) can tell a list being replaced from a list that is shown.
 */
export function newestOnly(busy?: HTMLElement): () => () => boolean {
  let current = 0;
  return () => {
    const mine = ++current;
    busy?.setAttribute("aria-busy", "true");
    return () => {
      if (mine !== current) return false;
      busy?.setAttribute("aria-busy", "false");
      return true;
    };
  };
}
