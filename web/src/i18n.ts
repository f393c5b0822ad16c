// The dashboard's languages are the server's message catalogues (src/messages/<lang>.json), one
// file per language: every visible string is a key of the English one, and the server's tests
// (core/message_test.cc) keep every other catalogue translating every key with the same
// placeholders. The sentences the server builds (job reasons, alert messages) arrive as a code
// with arguments and are rendered here from the same files, so a new language is one new file.
// A catalogue names its BCP 47 tag ("lang.tag") and its own name ("lang.name"). The chosen
// language is kept in localStorage. Single-threaded browser module state.
import enCatalogue from "../../src/messages/en.json";

const en = enCatalogue;
export type Key = keyof typeof en;
/** A language's BCP 47 tag, as its catalogue names it ("en", "zh-CN"). */
export type Lang = string;

const files = import.meta.glob<Record<Key, string>>("../../src/messages/*.json", { eager: true, import: "default" });
const dictionaries: Record<Lang, Record<Key, string>> = {};
for (const catalogue of Object.values(files)) dictionaries[catalogue["lang.tag"]] = catalogue;
const STORAGE_KEY = "gpurent.lang";

let current: Lang = readStoredLang();

function readStoredLang(): Lang {
  const stored = localStorage.getItem(STORAGE_KEY);
  return stored !== null && stored in dictionaries ? stored : "en";
}

/** Every language there is a catalogue for, English first: its tag and its own name. */
export function languages(): { tag: Lang; name: string }[] {
  return Object.values(dictionaries)
    .map((d) => ({ tag: d["lang.tag"], name: d["lang.name"] }))
    .sort((a, b) => (a.tag === "en" ? -1 : b.tag === "en" ? 1 : a.tag.localeCompare(b.tag)));
}

export function lang(): Lang {
  return current;
}

export function setLang(next: Lang): void {
  current = next in dictionaries ? next : "en";
  localStorage.setItem(STORAGE_KEY, next);
  document.documentElement.lang = current;
}

/** The string for `key` in the current language, with {name} placeholders filled in. */
export function t(key: Key, params: Record<string, string | number> = {}): string {
  const template = dictionaries[current][key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** A text the API sends as `text` with its code in `text_message`, in the current language. */
export function localText(x: { text: string; text_message?: ServerMessage }): string {
  return renderMessage(x.text_message, x.text);
}

/** Whether `key` is in the dictionary (labels for values a newer server may extend). */
export function isKey(key: string): key is Key {
  return key in en;
}

/** A dictionary label when the server's value is known, else the value itself (a newer server). */
export function labelOr(key: string, fallback: string): string {
  return isKey(key) ? t(key) : fallback;
}

/**
 * An alert's message in the current language: from its code (text_message) and the shared
 * catalogue, each text argument rewritten by `arg` (alert_text.ts: amounts and dates); else the
 * stored text ({message_en, message_zh}) of an alert stored before codes.
 */
export function message(m: { message_en: string; message_zh: string; text_message?: ServerMessage },
  arg?: (name: string, text: string) => string): string {
  return renderMessage(m.text_message, current.startsWith("zh") ? m.message_zh : m.message_en, arg);
}

/** A job state's label; unknown states (from a newer server) show as they are. */
export function stateLabel(state: string): string {
  const key = `state.${state}` as Key;
  return key in en ? t(key) : state;
}

/** A sentence the server sends as a code with arguments (src/core/message.h). */
export interface ServerMessage {
  code: string;
  args?: Record<string, string | ServerMessage>;
}

/**
 * A server message in the current language, rendered from the shared catalogue; `fallback`
 * (the server's own rendering) when the catalogue lacks the code (a newer server). `arg`, when
 * given, rewrites each text argument by its name (nested messages' too) before it is filled in.
 */
export function renderMessage(m: ServerMessage | null | undefined, fallback = "", arg?: (name: string, text: string) => string): string {
  if (!m || !m.code) return fallback;
  const dict = dictionaries[current] as Record<string, string>;
  if (m.code === "join") {
    // Sentences in the order of their argument names (p000000, p000001, …), src/core/message.h.
    const sep = dict["join.separator"] ?? " ";
    return Object.keys(m.args ?? {}).sort().map((k) => {
      const a = m.args![k];
      return typeof a === "string" ? (arg ? arg(k, a) : a) : renderMessage(a, "", arg);
    }).join(sep);
  }
  const template = dict[m.code] ?? (en as Record<string, string>)[m.code];
  if (template === undefined) return fallback || m.code;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const a = m.args?.[name];
    if (a === undefined) return whole;
    return typeof a === "string" ? (arg ? arg(name, a) : a) : renderMessage(a, "", arg);
  });
}
