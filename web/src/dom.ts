// Small DOM builders. Text always goes in through textContent, never innerHTML, so API
// strings (names, reasons, descriptions) cannot inject markup.

import { centsText } from "./format";

export type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** A table with a header row; each cell is text or a node. `testid` names it for tests. */
export function table(testid: string, headers: string[], rows: Child[][], rowIds?: string[]): HTMLTableElement {
  const head = h("thead", {}, h("tr", {}, ...headers.map((text) => h("th", { scope: "col" }, text))));
  const body = h(
    "tbody",
    {},
    ...rows.map((cells, i) =>
      h("tr", { "data-row": rowIds?.[i] }, ...cells.map((cell) => h("td", {}, cell))),
    ),
  );
  return h("table", { "data-testid": testid }, head, body);
}

/** A cell holding an exact decimal string from the API, right-aligned, monospaced digits. */
export function num(text: string, title?: string): HTMLSpanElement {
  return h("span", { class: "num", title }, text);
}

export function notice(kind: "error" | "info", text: string, testid?: string): HTMLElement {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", "data-testid": testid }, text);
}

/** Replaces `parent`'s children, skipping null/false entries. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** An amount of money: the API's exact string, then its currency ("1234.50 USD"). */
export function money(amount: string, currency: string, testid?: string): HTMLSpanElement {
  return h("span", { class: "money", "data-testid": testid }, num(amount), ` ${currency}`);
}

/** A derived amount the API keeps micro-exact, shown to the cent (centsText); the exact figure as its tooltip. */
export function cents(amount: string, currency: string, testid?: string): HTMLSpanElement {
  return h("span", { class: "money", "data-testid": testid }, num(centsText(amount), amount), ` ${currency}`);
}

/** A summary figure with its label (a "card" in the row of figures atop a view). */
export function stat(value: Child, label: string, testid: string, tone?: string): HTMLElement {
  return h("div", { class: tone ? `card ${tone}` : "card", "data-testid": testid },
    h("span", { class: "card-value" }, value), h("span", { class: "card-label" }, label));
}
