// The REST client: a bearer token kept in localStorage, JSON in and out, RFC 7807 problems
// turned into ApiError. Lists are followed across pages (`next_after`).

import { lang, t } from "./i18n";

const TOKEN_KEY = "gpurent.token";
const BASE = "api/v1";
export const TOKEN_PATTERN = /^gpr_[0-9a-f]{64}$/;

/** A field the server refused, as its problem document names it (`errors[]`). */
export interface FieldError {
  field: string;
  reason: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly fields: FieldError[] = [],
    readonly code?: string, // the problem's message code (detail_message.code), when it sent one
  ) {
    super(`${status}: ${detail}`);
  }
}

export function storedToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  localStorage.setItem(TOKEN_KEY, token);
}

export function clearToken(): void {
  localStorage.removeItem(TOKEN_KEY);
}

type Query = Record<string, string | undefined>;

function url(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
  const qs = params.toString();
  return `${BASE}/${path}${qs ? `?${qs}` : ""}`;
}

/** Sends one request with `token` (default: the stored one) and parses the JSON answer. */
export async function request<T>(method: "GET" | "POST" | "DELETE", path: string, options: {
  query?: Query;
  body?: unknown;
  token?: string;
} = {}): Promise<T> {
  // The server renders its own sentences (errors among them) in the dashboard's language.
  const headers: Record<string, string> = { Accept: "application/json", "Accept-Language": lang() };
  const token = options.token ?? storedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (method === "POST") {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body ?? {});
  }
  let response: Response;
  try {
    response = await fetch(url(path, options.query), { method, headers, body });
  } catch (e) {
    throw new ApiError(0, e instanceof Error ? e.message : String(e));
  }
  const text = await response.text();
  if (!response.ok) {
    // Not a problem document (a proxy's 502 page, a restart): said in the reader's language, the
    // protocol's own words (English, and empty over HTTP/2) only in brackets.
    let detail = t("common.not_api") + (response.statusText ? ` (${response.statusText})` : "");
    let fields: FieldError[] = [];
    let code: string | undefined;
    try {
      const problem = JSON.parse(text) as { detail?: string; title?: string; errors?: FieldError[]; detail_message?: { code?: string } };
      detail = problem.detail ?? problem.title ?? detail;
      code = problem.detail_message?.code;
      if (Array.isArray(problem.errors)) fields = problem.errors.filter((e) => typeof e?.field === "string");
    } catch {
      /* not a problem document: keep the status text */
    }
    const error = new ApiError(response.status, detail, fields, code);
    // The stored token stopped working (expired, revoked, its user deleted): the page goes back to
    // sign-in (main.ts) instead of every view showing the 401.
    if (response.status === 401 && options.token === undefined && token)
      window.dispatchEvent(new CustomEvent("gpurent:unauthorized", { detail: { error, token } }));
    throw error;
  }
  return (text ? JSON.parse(text) : null) as T; // DELETE answers 204 with no body
}

export function get<T>(path: string, query: Query = {}, token?: string): Promise<T> {
  return request<T>("GET", path, { query, token });
}

export function post<T>(path: string, body: unknown, query: Query = {}): Promise<T> {
  return request<T>("POST", path, { body, query });
}

export function del(path: string): Promise<unknown> {
  return request<unknown>("DELETE", path);
}

interface Page<T> {
  items: T[];
  next_after: string | null;
}

/** Every item of a paged list, following `next_after` (1000 a page). */
export async function getAll<T>(path: string, query: Query = {}, token?: string): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await get<Page<T>>(path, { ...query, limit: "1000", after }, token);
    items.push(...page.items);
    if (!page.next_after) return items;
    after = page.next_after;
  }
}
