// The answers of the market endpoints (docs/market.md; docs/openapi.json has them in full):
// GET /api/v1/market/{quote,depth,prints,index} (public, no identities) and the caller's own
// GET /api/v1/market-orders and /market-trades. Prices and amounts stay the server's decimal strings.

/** What names a book: GPU model, region, delivery window (whole UTC hours), currency, and for a book of whole nodes their size. */
export interface BookKey {
  gpu_model: string;
  region: string;
  starts_at: string; // RFC 3339
  ends_at: string;
  currency: string;
  node_gpus?: number; // a book of whole nodes of this many GPUs (docs/market.md#node-books); absent: GPUs
}

export interface BookLevel {
  price_per_gpu_hour: string;
  gpus: number;
  orders: number;
}

export interface MarketQuote extends BookKey {
  window_hours: number;
  bid: BookLevel | null;
  ask: BookLevel | null;
}

export interface MarketDepth extends BookKey {
  window_hours: number;
  bids: BookLevel[]; // best first
  asks: BookLevel[];
}

export interface MarketPrint {
  at: string;
  price_per_gpu_hour: string;
  gpus: number;
  taker_side: string;
}

export interface MarketPrints extends BookKey {
  window_hours: number;
  prints: MarketPrint[]; // newest first
}

export interface IndexDay {
  day: string; // UTC day "2026-12-04"
  vwap_per_gpu_hour: string;
  gpu_hours: number;
  trades: number;
  low_per_gpu_hour: string;
  high_per_gpu_hour: string;
}

export interface MarketIndex {
  gpu_model: string;
  region: string;
  currency: string;
  from: string;
  to: string;
  method: string;
  days: IndexDay[];
}

export interface MarketOrder extends BookKey {
  id: string;
  side: string; // buy | sell
  state: string; // open | filled | cancelled
  gpus: number;
  filled_gpus: number;
  remaining_gpus: number;
  price_per_gpu_hour: string;
  time_in_force: string;
  all_or_none?: boolean;
  window_hours: number;
  replaced_by?: string; // a replaced order's successor
  replaces?: string; // the order a new one replaced
  created_at: string;
  updated_at: string; // the last fill, cancel or replace
  tenant?: string; // buys
  supplier?: string; // sells
}

export interface MarketTrade extends BookKey {
  id: string;
  at: string;
  price_per_gpu_hour: string;
  gpus: number;
  gpu_hours: number;
  amount: string;
  buy_order: string;
  sell_order: string;
  taker_side: string;
  /** "settled", or "defaulted" when the seller did not deliver all of it (docs/market.md#settlement). */
  state: string;
  settlement: { state: string; reservation: string | null; contract: string; delivered_gpus: number; nodes: string[] };
  tenant_id: string;
  supplier_id: string;
}
