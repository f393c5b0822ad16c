// The parts build_demo_world (demo_world.cc) assembles: the supply side (suppliers, their nodes
// and offers) and the demand side (tenants, users, projects, sample jobs). Internal to src/demo;
// exposed for its tests. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "core/result.h"
#include "demo/demo_world.h"
#include "demo/price_lists.h"
#include "model/offer.h"

namespace gpurent {

// (provider, catalog GPU id) -> representative USD price from the public lists.
using ListPrices = std::map<std::pair<std::string, std::string>, GpuPrice>;

// The (provider, catalog GPU id) pairs whose offers are priced from the public lists.
const std::vector<std::pair<std::string, std::string>>& listed_offer_models();

// An offer's prices from a list price: on-demand and spot as listed; reserved prices, which the
// lists do not have, derived by a stated rule: 1 month 5% off, 12 months 20% off, 36 months 35%
// off on-demand (in the range of the public 1- to 3-year commitment discounts of GPU clouds),
// each rounded half to even to the cent.
Result<OfferPrices> list_offer_prices(const GpuPrice& p);

// Suppliers, then their nodes, then their offers (all created by the operator). Fails when
// `prices` lacks a pair of listed_offer_models() or the catalog lacks a model the fleet uses.
Result<std::vector<DemoObject>> supply_objects(const ListPrices& prices, const GpuCatalog& catalog);

// Tenants (operator), their tenant_admin users and the supplier user (operator), the other
// tenant users, projects and jobs (each tenant's admin, via as_tenant).
std::vector<DemoObject> demand_objects();

}  // namespace gpurent
