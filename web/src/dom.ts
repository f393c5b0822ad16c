// Small DOM builders. Text always goes in through textContent, never innerHTML, so API
// strings (names, reasons, descriptions) cannot inject markup.

import { instantText, utcText } from "./dates";
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

/**
 * A table with a header row; each cell is text or a node. `testid` names the table for tests.
 * Returned in a box that scrolls sideways when the columns are wider than the page (a header
 * wraps only at a space, never inside a word: style.css).
 */
export function table(testid: string, headers: Child[], rows: Child[][], rowIds?: string[]): HTMLElement {
  const head = h("thead", {}, h("tr", {}, ...headers.map((text) => h("th", { scope: "col" }, text))));
  const body = h(
    "tbody",
    {},
    ...rows.map((cells, i) =>
      h("tr", { "data-row": rowIds?.[i] }, ...cells.map((cell) => h("td", {}, cell))),
    ),
  );
  return h("div", { class: "table-scroll" }, h("table", { "data-testid": testid }, head, body));
}

/** An instant from the API in the chosen language and the user's time zone, its UTC form on hover. */
export function when(rfc3339: string, testid?: string): HTMLTimeElement {
  return h("time", { datetime: rfc3339, title: utcText(rfc3339), "data-testid": testid }, instantText(rfc3339));
}

/** A sentence naming a period (`from`/`to` filled in as `when` writes them), the UTC range on hover. */
export function periodNote(text: (from: string, to: string) => string, from: string, to: string, testid?: string): HTMLElement {
  return h("p", { class: "muted", title: `${utcText(from)} – ${utcText(to)}`, "data-testid": testid }, text(instantText(from), instantText(to)));
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
