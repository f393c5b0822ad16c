// The answers of the dashboard endpoints (GET /api/v1/dashboard/…; docs/openapi.json and
// docs/api.md have them in full). Money and other decimals stay strings, exactly as the server
// wrote them; metric values are JSON numbers (metrics are not money).

import type { ServerMessage } from "./i18n";
import type { ServerText } from "./types";

export interface UtilizationCard {
  node_id: string;
  node: string;
  gpu: number;
  label: string; // "node #gpu", or "supplier/node #gpu" where two suppliers' nodes share the name
  supplier_id: string;
  supplier: string;
  gpu_model: string;
  projects: string[];
  mean_pct: number;
  samples: number;
  idle: boolean;
}

export interface Utilization {
  from: string;
  to: string;
  bucket_seconds: number;
  hours: string[];
  idle_threshold_pct: number;
  cards: UtilizationCard[];
  cells: [card: number, hour: number, meanPct: number, samples: number][];
}

export interface BurnPoint {
  date: string;
  spent: string;
  remaining: string;
}

export interface Budget {
  monthly: string;
  month: string; // YYYY-MM
  spent: string;
  remaining: string;
  burn: BurnPoint[];
  projected_month_end: string;
  projected_over: boolean;
}

export interface ProjectCosts {
  project_id: string;
  project: string;
  daily: string[];
  storage_io_daily: string[];
  egress_daily: string[];
  total: string;
  reserved_covered_value: string; // GPU time covered by reserved commitments, at their price (not billed to the project)
  storage_io_share_pct: string;
  storage_io_over_threshold: boolean; // exact, as the firewall compares
  budget: Budget | null;
}

export interface CardCosts {
  node_id: string;
  node: string;
  supplier: string;
  label: string; // as UtilizationCard.label
  gpu: number;
  daily: string[];
  max_daily: string;
  over_threshold_days: number;
}

export interface CostAlert {
  id: string;
  kind: string;
  project: string;
  state: string;
  message_en: string;
  message_zh: string;
  text_message?: ServerMessage;
  frozen: boolean;
}

export interface TenantCosts {
  tenant_id: string;
  tenant: string;
  currency: string;
  card_threshold: string;
  egress_threshold: string;
  storage_io_share_threshold_pct: number;
  daily_total: string[];
  projects: ProjectCosts[];
  cards: CardCosts[]; // the 50 costliest
  cards_over_threshold: number; // over every card, listed or not
  alerts: CostAlert[];
}

export interface Costs {
  from: string;
  to: string;
  days: string[]; // YYYY-MM-DD, UTC
  tenants: TenantCosts[];
}

export interface CostPerfJob {
  job_id: string;
  job: string;
  project: string;
  kind: string;
  metric: string;
  higher_is_better: boolean;
  first: number;
  last: number;
  gain: number;
  gpu_hours: string;
  gain_per_gpu_hour: number | null; // null when the span holds no GPU time
  cost: string; // what the job was billed: charges + credits
  currency: string;
  // Apart (a server before they were added sends only cost): charges (usage, fees), credits (SLA
  // refunds, ≤ 0), and the GPU time a reserved commitment covered at its price (billed with the
  // commitment, not in cost).
  charges?: string;
  credits?: string;
  reserved_covered_value?: string;
  other_costs?: CostParts[]; // a job billed in more currencies than one
  cost_per_unit_gain: string | null; // (charges + reserved_covered_value) ÷ gain, before credits
  mean_util_pct: number | null;
  rank: number;
  inefficient: boolean;
  flags: (ServerText & { key: string })[];
}

export interface CostParts {
  cost: string;
  currency: string;
  charges?: string;
  credits?: string;
  reserved_covered_value?: string;
}

export interface CostPerformance {
  from: string;
  to: string;
  jobs: CostPerfJob[];
  median_gain_per_gpu_hour: Record<string, number | null>;
}

export interface SupplierDay {
  date: string;
  incidents: number;
  outage_minutes: number;
}

export interface SupplierHealth {
  supplier_id: string;
  supplier: string;
  nodes: number;
  gpus: number;
  node_hours: string;
  incidents: number;
  failure_rate_bp: number | null;  // null: no fleet to rate
  restore_minutes: number | null;
  response_minutes: number | null;
  fp16_attainment_permille: number | null;
  nccl_attainment_permille: number | null;
  availability_pct: string | null;  // null: no node-hours in the range
  score: string | null;             // null: not scored
  blocked: boolean;
  share_pct: string | null;
  daily: SupplierDay[];
}

export interface SuppliersHealth {
  from: string;
  to: string;
  suppliers: SupplierHealth[];
}

export interface Project {
  id: string;
  name: string;
  display_name?: string;
  tenant: string;
  tenant_id: string;
}

export interface NodeRef {
  id: string;
  name: string;
  supplier: string;
  supplier_id: string;
}
