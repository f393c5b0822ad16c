// How the dashboard writes times, one rule each, in the chosen language (i18n.ts lang(), not the
// browser's locale) with Intl:
// - an instant (an RFC 3339 string from the API: a job's update, an alert's start, a period's
//   ends): date and time in the user's time zone, to the minute ("Dec 1, 2026, 08:00",
//   "2026年12月1日 08:00"); its UTC form goes in the title (dom.ts when), shown on hover;
// - an hour bucket of the utilization heatmap: month, day and hour in the user's time zone;
// - a UTC day of the API's daily buckets ("2026-11-29") and a month ("2026-11"): the day or month
//   itself (never shifted by the time zone: a UTC day is the API's bucket), named in the language.
// Single-threaded browser module; the formatters follow the language at each call.

import { lang } from "./i18n";

const INSTANT: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
const HOUR: Intl.DateTimeFormatOptions = { month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
const DAY: Intl.DateTimeFormatOptions = { month: "short", day: "numeric", timeZone: "UTC" };
const DATE: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" };
const MONTH: Intl.DateTimeFormatOptions = { year: "numeric", month: "long", timeZone: "UTC" };

const cache = new Map<string, Intl.DateTimeFormat>();
function formatter(name: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${lang()}|${name}`;
  let f = cache.get(key);
  if (!f) cache.set(key, (f = new Intl.DateTimeFormat(lang(), options)));
  return f;
}

function parse(rfc3339: string): Date | null {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** An instant in the chosen language and the user's time zone; text that is not a time as it is. */
export function instantText(rfc3339: string): string {
  const d = parse(rfc3339);
  return d ? formatter("instant", INSTANT).format(d) : rfc3339;
}

/** An instant as UTC, for a title: "2026-12-01 00:00:00 UTC". */
export function utcText(rfc3339: string): string {
  const d = parse(rfc3339);
  return d ? `${d.toISOString().slice(0, 19).replace("T", " ")} UTC` : rfc3339;
}

/** A heatmap hour (an instant on a whole UTC hour) in the user's time zone: "11/29, 22:00". */
export function hourText(rfc3339: string): string {
  const d = parse(rfc3339);
  return d ? formatter("hour", HOUR).format(d) : rfc3339;
}

/** A UTC day "2026-11-29" with its year, named in the language: "Nov 29, 2026", "2026年11月29日". */
export function dateText(date: string): string {
  const d = /^\d{4}-\d{2}-\d{2}$/.test(date) ? parse(`${date}T00:00:00Z`) : null;
  return d ? formatter("date", DATE).format(d) : date;
}

/** A UTC day "2026-11-29" named in the language: "Nov 29", "11月29日". */
export function dayText(date: string): string {
  const d = /^\d{4}-\d{2}-\d{2}$/.test(date) ? parse(`${date}T00:00:00Z`) : null;
  return d ? formatter("day", DAY).format(d) : date;
}

/** A month "2026-11" named in the language: "November 2026", "2026年11月"; other text as it is. */
export function monthText(month: string): string {
  const d = /^\d{4}-\d{2}$/.test(month) ? parse(`${month}-01T00:00:00Z`) : null;
  return d ? formatter("month", MONTH).format(d) : month;
}

/** The twelve months' names in the language, January first: "January" …, "一月" …. */
export function monthNames(): string[] {
  const f = formatter("month-name", { month: "long", timeZone: "UTC" });
  return Array.from({ length: 12 }, (_, i) => f.format(new Date(Date.UTC(2000, i, 1))));
}
