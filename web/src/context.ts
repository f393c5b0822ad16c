// What a view needs to know about the signed-in account: whether it acts for the operator
// (every tenant), one tenant (as its admin or not), or a supplier, and the tenants it can see by id.

import type { Tenant } from "./types";

export type Scope =
  | { kind: "operator" }
  | { kind: "tenant"; tenantId: string; admin: boolean; writer: boolean } // admin: role tenant_admin; writer: it or tenant_member
  | { kind: "supplier" };

export interface ViewContext {
  scope: Scope;
  tenants: Map<string, Tenant>; // by id; empty for suppliers
  query: URLSearchParams; // the part of the location hash after '?'
  navigate(query: Record<string, string>): void; // same view, new query (kept in the hash)
  reload(): void; // the same view and query read again (after a change such as a Lift)
}

export function tenantName(ctx: ViewContext, id: string): string {
  return ctx.tenants.get(id)?.name ?? id;
}

/**
 * Whether the account may submit jobs and create, start, stop and release instances (the jobs row
 * of the permission matrix, docs/security.md): operators, and a tenant's admins and members for
 * their own tenant; viewers and suppliers read only. The server decides; this only hides buttons.
 */
export function mayWriteJobs(ctx: ViewContext): boolean {
  return ctx.scope.kind === "operator" || (ctx.scope.kind === "tenant" && ctx.scope.writer);
}

/** Whether the account may lift a cost-firewall alert: operators, and a tenant's admins for its own. */
export function mayLiftAlerts(ctx: ViewContext): boolean {
  return ctx.scope.kind === "operator" || (ctx.scope.kind === "tenant" && ctx.scope.admin);
}
