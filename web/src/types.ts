// The parts of the API's resources the dashboard reads (docs/openapi.json has them in full).
// Money and other decimals stay strings, exactly as the server wrote them.

export interface Tenant {
  id: string;
  name: string;
  display_name?: string;
  currency: string;
}

export interface TokenInfo {
  role: string;
  tenant_id?: string;
  supplier_id?: string;
}

export interface NodeInfo {
  id: string;
  name: string;
}

export interface Placement {
  replica: number;
  worker: number;
  node: string;
  gpus: number[];
  gpu_milli?: number;
  nvlink_domain?: string;
}

export interface Job {
  id: string;
  name: string;
  kind: string;
  project: string;
  tenant_id: string;
  gpus_per_worker?: number;
  workers?: number;
  status: { state: string; reason: string; placement: Placement[]; updated_at: string };
}

export interface Offer {
  id: string;
  name: string;
  supplier: string;
  region: string;
  gpu_model: string;
  currency: string;
  min_increment_seconds?: number;
  prices: Partial<Record<"on_demand" | "spot" | "reserved_1m" | "reserved_12m" | "reserved_36m", string>>;
}

export interface Totals {
  charges: string;
  credits: string;
  total: string;
}

export interface InvoiceLine {
  kind: string;
  rule: string;
  description: string;
  project: string;
  job: string;
  quantity: string;
  unit: string;
  unit_price: string;
  price_unit: string;
  amount: string;
  amount_exact: string;
}

export interface InvoiceSection {
  contract: string;
  currency: string;
  lines: InvoiceLine[];
  totals: Totals;
}

export interface Invoice {
  tenant: string;
  period: { from: string; to: string };
  rated_until: string;
  sections: InvoiceSection[];
  totals: Record<string, Totals>;
  unpriced_allocations: string[];
}

export interface Bilingual {
  en: string;
  zh: string;
}

export interface SupplierItem extends Bilingual {
  id: string;
  kind: string;
  must_have: boolean;
  status: string;
  weight: number;
  credit_permille: number;
  evidence: Bilingual;
}

export interface SupplierAdvice {
  name: string;
  display_name?: string;
  score: string;
  blocked: boolean;
  eligible: boolean;
  hard_failures: string[];
  share_pct: string;
  items: SupplierItem[];
}

export interface SuppliersAdvice {
  history_period: { from: string; to: string };
  split: Bilingual & { floor: string; cap_pct: string; effective_cap_pct: string };
  suppliers: SupplierAdvice[];
}
