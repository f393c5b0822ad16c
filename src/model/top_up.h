// Top-up: money a prepaid tenant paid in (kind "top-ups", id "tup_…"), in one currency, recorded by
// an operator (POST /api/v1/top-ups) or by the payment provider's signed webhook (POST
// /api/v1/payments/webhook). Append-only: never changed or deleted; a correction is a negative
// top-up by an operator, with a note. `reference` (the payment's id) is unique per tenant, so a
// webhook delivered twice records the money once. Balances: docs/billing.md#balances.
// Value types and pure functions; thread-safe.
#pragma once

#include <string>

#include "core/money.h"
#include "model/resource.h"

namespace gpurent {

enum class TopUpSource { kOperator, kPaymentWebhook };
inline constexpr EnumEntry<TopUpSource> kTopUpSourceNames[] = {{TopUpSource::kOperator, "operator"},
                                                               {TopUpSource::kPaymentWebhook, "payment_webhook"}};

inline constexpr int64_t kMaxTopUpUnits = 10'000'000'000;  // |amount| at most 10^10 currency units

struct TopUp {
  std::string tenant;     // reference as given (id or name)
  std::string tenant_id;  // resolved by the server
  Money amount;           // != 0; negative only from an operator, with a note
  std::string reference;  // 1-128 of [A-Za-z0-9._:/-], unique per tenant
  std::string note;       // at most 500 characters
  TopUpSource source = TopUpSource::kOperator;  // set by the server
  std::string by;         // the user id, or "payment-webhook" (set by the server)
  bool operator==(const TopUp&) const = default;
};

// A body {tenant, currency?, amount, reference, note?}; `c` is the currency when the body names
// none (the tenant's). Errors name the field.
Result<TopUp> parse_top_up(const json& body, Currency c);
// A stored document (tenant_id, currency, amount, reference, note, source, by).
Result<TopUp> decode_top_up(const json& body);
json to_json(const TopUp& t);

}  // namespace gpurent
