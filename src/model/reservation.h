// Reservation: nodes held for one tenant over a time window — the capacity side of a reserved
// commitment (包年包月). While it is active the scheduler places the tenant's jobs there first;
// other tenants may use idle reserved nodes only preemptibly (docs/scheduler.md). Operators create
// them (from a contract's reserved billing mode, or a market trade later); the tenant's users read
// their own. Schema: docs/resources/reservations.md. Value types and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "model/resource.h"

namespace gpurent {

inline constexpr size_t kMaxReservedNodes = 4096;

struct Reservation {
  std::string name;                // slug, unique within the tenant
  std::string tenant;              // reference as given (id or name)
  std::vector<std::string> nodes;  // references as given (ids or names), no duplicates
  TimeMs starts_at = 0;
  TimeMs ends_at = 0;              // > starts_at
  std::optional<std::string> offer;  // the offer it was bought under (reference), if any
  std::optional<std::string> note;

  // Set by the server from the resolved references; parse ignores these keys.
  std::string tenant_id;
  std::vector<std::string> node_ids;
  std::string offer_id;

  bool active_at(TimeMs t) const { return starts_at <= t && t < ends_at; }
  bool operator==(const Reservation&) const = default;
};

Result<Reservation> parse_reservation(const json& body);
Result<Reservation> decode_reservation(const json& body);  // a stored one: parse + tenant_id, node_ids, offer_id
json to_json(const Reservation& r);  // includes tenant_id, node_ids and offer_id when set
IndexCols index_of(const Reservation& r);  // name, tenant_id

}  // namespace gpurent
