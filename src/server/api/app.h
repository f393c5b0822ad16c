// What every route file gets: the services' context (store, catalog, single-writer loop, clock,
// metrics, options) and the API's own registry of kinds and HTTP figures. Owned by run_server();
// route handlers run on HTTP threads and only read through `store`, writing through `loop`
// (services/control_loop.h).
#pragma once

#include <httplib.h>

#include <functional>
#include <map>
#include <string>

#include "server/http/auth.h"
#include "server/http/router.h"
#include "server/services/context.h"

namespace gpurent {

struct KindSpec;
struct HttpStats;
class RateLimiter;
class LeaderLease;
class MarketBooks;

struct App : ServiceContext {
  std::map<std::string, KindSpec>& kinds;  // filled by register_crud
  // The HTTP front's counters and limits, for /metrics; null where routes run without it (tests).
  // The limiter also holds the per-tenant buckets that routes check once a token is authenticated.
  const HttpStats* http_stats = nullptr;
  RateLimiter* rate_limiter = nullptr;
  // Several servers on one PostgreSQL database: this one's view of the leader lease (/readyz); null
  // on SQLite, where the one server does everything.
  const LeaderLease* leader = nullptr;
  // The market's books kept in memory (market_books.h); null: read from the store every time.
  MarketBooks* market_books = nullptr;
};

// An authenticated handler: called only when the bearer token is valid.
using AuthedHandler = std::function<void(const httplib::Request&, httplib::Response&, const Principal&)>;

// Registers METHOD pattern with authentication, problem+json on exceptions, metrics under `route`.
void route(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& route_name,
           AuthedHandler h);
// The same for a handler function that takes the App: route(app, srv, "GET", pattern, name, get_thing).
using AppHandler = void (*)(App&, const httplib::Request&, httplib::Response&, const Principal&);
void route(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& route_name,
           AppHandler h);

// A job metric batch of `points` points takes as many tokens from its job's tenant's metric-points
// bucket (rate_limit.h check_points); false, with the 429 answered (problem+json, Retry-After),
// when the tenant's jobs have sent more than their rate. Always true without a rate limiter.
bool take_metric_points(App& app, const std::string& tenant_id, int64_t points, const httplib::Request& req,
                        httplib::Response& res);

// Every route of the API (the list below, in order); what run_server and the OpenAPI test use.
void register_all_routes(App& app, Router& srv);

// Route files: one per resource.
void register_system_routes(App& app, Router& srv);
void register_catalog_routes(App& app, Router& srv);
void register_supplier_routes(App& app, Router& srv);
void register_node_routes(App& app, Router& srv);
void register_offer_routes(App& app, Router& srv);
void register_tenant_routes(App& app, Router& srv);
void register_project_routes(App& app, Router& srv);
void register_user_routes(App& app, Router& srv);
void register_token_routes(App& app, Router& srv);
void register_job_routes(App& app, Router& srv);
void register_fault_routes(App& app, Router& srv);
void register_reservation_routes(App& app, Router& srv);
void register_usage_routes(App& app, Router& srv);
void register_contract_routes(App& app, Router& srv);  // contracts, allocations
void register_invoice_routes(App& app, Router& srv);
void register_issued_invoice_routes(App& app, Router& srv);  // issued invoices, credit notes, month close
void register_balance_routes(App& app, Router& srv);  // top-ups, balances, tenants' billing, payment webhook
void register_alert_routes(App& app, Router& srv);  // alerts, webhooks
void register_measurement_routes(App& app, Router& srv);
void register_acceptance_run_routes(App& app, Router& srv);  // acceptance_runs.cc
void register_poc_run_routes(App& app, Router& srv);         // poc_runs.cc
void register_market_routes(App& app, Router& srv);           // market.cc
// Places a market order as POST /api/v1/market-orders does (the demo seeds its book with it).
Result<Record> place_market_order(App& app, const json& body, const Principal& p);
// Every open market order whose delivery window is over (ends_at <= now) leaves its book as
// `expired`, nothing traded (docs/market.md); how many. One book per write: a book that fails is
// logged (market_expiry_failed), counted in `failed_books` and left as it is, the others go on; an
// error only when the open orders cannot be read at all. Any thread: writes through the loop.
Result<int> expire_market_orders(App& app, TimeMs now, int* failed_books = nullptr);
void register_advisor_routes(App& app, Router& srv);  // POST /api/v1/advise/*
void register_job_metric_routes(App& app, Router& srv);  // /api/v1/jobs/{id}/metrics
void register_secret_routes(App& app, Router& srv);      // /api/v1/projects/{id}/secrets
void register_artifact_routes(App& app, Router& srv);    // /api/v1/projects/{id}/artifacts
void register_image_routes(App& app, Router& srv);       // /api/v1/images
void register_volume_routes(App& app, Router& srv);      // /api/v1/volumes
void register_instance_routes(App& app, Router& srv);    // /api/v1/instances
void register_dashboard_usage_routes(App& app, Router& srv);  // GET /api/v1/dashboard/{utilization,suppliers,fragmentation}
void register_dashboard_cost_routes(App& app, Router& srv);  // GET /api/v1/dashboard/{costs,cost-performance}

}  // namespace gpurent
