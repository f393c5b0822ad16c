// What a view needs to know about the signed-in account: whether it acts for the operator
// (every tenant), one tenant, or a supplier, and the tenants it can see by id.

import type { Tenant } from "./types";

export type Scope =
  | { kind: "operator" }
  | { kind: "tenant"; tenantId: string }
  | { kind: "supplier" };

export interface ViewContext {
  scope: Scope;
  tenants: Map<string, Tenant>; // by id; empty for suppliers
  query: URLSearchParams; // the part of the location hash after '?'
  navigate(query: Record<string, string>): void; // same view, new query (kept in the hash)
}

export function tenantName(ctx: ViewContext, id: string): string {
  return ctx.tenants.get(id)?.name ?? id;
}
