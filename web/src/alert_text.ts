// An alert's message as the dashboard shows it: rendered from its code in the chosen language
// (i18n.ts message), its amounts at their currency's precision (the server passes them
// micro-exact, "935.38895 USD" → "935.39 USD"; the alert's own figures keep the exact ones on
// hover) and its UTC day (`date`) and month (`month`) named in the language (dates.ts).

import { dateText, monthText } from "./dates";
import { moneyInText } from "./format";
import { message, type ServerMessage } from "./i18n";

export function alertText(a: { message_en: string; message_zh: string; text_message?: ServerMessage }): string {
  return message(a, alertArg);
}

function alertArg(name: string, text: string): string {
  if (name === "date") return dateText(text);
  if (name === "month") return monthText(text);
  return moneyInText(text);
}
