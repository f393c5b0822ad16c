import type { ServerMessage } from "./i18n";

// The parts of the API's resources the dashboard reads (docs/openapi.json has them in full).
// Money and other decimals stay strings, exactly as the server wrote them.

export interface Tenant {
  id: string;
  name: string;
  display_name?: string;
  currency: string;
}

/** GET /me: the caller as its requests act now (the user's current role and scope). */
export interface Me {
  user_id: string;
  user: string;
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
  gpus_per_worker?: number | null;
  gpu_milli?: number | null; // a share of one card per worker (milli-GPU) instead of whole GPUs
  workers?: number;
  status: { state: string; reason: string; reason_message?: ServerMessage; placement: Placement[]; updated_at: string };
}

/** A run of a job in the allocation ledger (GET /api/v1/allocations). */
export interface Allocation {
  id: string;
  job_id: string;
  job: string;
  tenant_id: string;
  placement: { node_id: string; node: string; gpus: number[] }[];
  gpu_milli: number;
  running_at: string;
  ended_at: string | null;
  end_reason: string;
  end_reason_message?: ServerMessage;
  state: string;
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

/** A sentence the server words: `text` (in the request's language) and its code. */
export interface ServerText {
  text: string;
  text_message?: ServerMessage;
}

export interface SupplierItem extends ServerText {
  id: string;
  kind: string;
  must_have: boolean;
  status: string;
  weight: number;
  credit_permille: number;
  evidence: string;
  evidence_message?: ServerMessage;
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
  split: ServerText & { floor: string; cap_pct: string; effective_cap_pct: string };
  suppliers: SupplierAdvice[];
}

export interface SupplierInfo {
  id: string;
  name: string;
  display_name?: string;
}

export interface Alert {
  id: string;
  key: string;
  kind: string;
  severity: string;
  tenant: string;
  project: string;
  subject: string;
  measured: string;
  threshold: string;
  unit: string;
  message_en: string;
  message_zh: string;
  text_message?: ServerMessage;
  freeze_egress: boolean;
  upload_limit_bytes: number;
  hold_submissions: boolean;
  stop_work?: boolean; // the tenant's running work was stopped (balance exhausted)
  state: string;
  first_seen: string;
  resolved_at?: string;
  lifted_at?: string;
  lifted_by?: string;
}

/** The workload of POST /api/v1/advise/quotes (docs/advisor/quotes.md), whole numbers only. */
export interface QuoteWorkload {
  launches_per_month: number;
  gpus: number;
  run_minutes: number;
  idle_pct: number;
  egress_gb: number;
  storage_io_gb: number;
}

export interface QuoteRank {
  rank: number;
  list_rank: number;
  offer: string;
  supplier: string;
  name: string;
  gpu_model: string;
  list_price: string;
  plan: string;
  total: string;
  per_useful_gpu_hour: string;
  overhead_pct: string;
}

export interface QuotesAdvice {
  currency: string;
  workload: { useful_gpu_hours: string };
  ranking: QuoteRank[];
  sticker_misleads: boolean;
  misleads: string;
  misleads_message?: ServerMessage;
}

/** A catalog GPU model (GET /api/v1/gpu-models); the console offers those some offer sells. */
export interface GpuModel {
  id: string;
  name: string;
  memory_gib?: number;
}

/** A tenant's volume (GET /api/v1/volumes). */
export interface Volume {
  id: string;
  name: string;
  tenant_id: string;
  size_gb: number;
}

/** An interactive instance (GET /api/v1/instances, docs/resources/instances.md). */
export interface Instance {
  id: string;
  name: string;
  tenant_id: string;
  project_id: string;
  gpus: number;
  gpu_model?: string;
  resources?: { cpu_cores?: number; memory_gib?: number };
  image?: string;
  volume?: { name: string; mount: string; size_gb?: number };
  shared_volumes?: { name: string; mount: string; read_only: boolean }[];
  notebook?: boolean;
  ssh_keys?: string[];
  state: string; // requested | starting | running | stopping | stopped | released
  released_at?: string; // once released: when (kept, read-only, for 7 days)
  stopping_since?: string; // while stopping: since when its container is being stopped
  want_running: boolean;
  job_ids: string[];
  current_job?: { id: string; name: string; state: string; reason?: string; reason_message?: ServerMessage };
  stop_reason?: string;
  stop_reason_message?: ServerMessage;
  stops_at?: string;
  cost_until_stop?: string;
  release_at?: string; // while stopped, when its offer releases stopped instances
  release_after_days?: number;
  cost_per_hour: { running: string | null; stopped: string | null; currency: string | null; basis: string | null };
  access: null | {
    ssh?: { host: string; port: number; user: string; command: string };
    notebook?: { host: string; port: number; url: string | null };
  };
  utilization: null | { percent: number; at: string };
}

/** What a job has cost so far (GET /api/v1/jobs/{ref}/cost): per currency. */
export interface JobCost {
  costs: Record<string, { charges: string; credits: string; total: string }>;
}
