// Internals shared by the rating engine's parts (not a public header): constant-rate pieces of
// allocations, the line accumulator, and the part functions rating.cc calls in order.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "billing/rating.h"

namespace gpurent::billing_detail {

inline constexpr int64_t kBytesPerGb = 1'000'000'000;
inline constexpr int64_t kTokensPerPrice = 1'000'000;
inline constexpr int64_t kMsPerQpsMonth = kMsPerBillingMonth;  // QPS are priced per billing month

// A slice of an allocation inside the period during which it held `milli` at one price.
struct Piece {
  const Allocation* alloc = nullptr;
  TimeMs t0 = 0;
  TimeMs t1 = 0;
  int64_t milli = 0;
  std::string rule;
  int64_t billed_price = 0;  // micros per GPU-hour charged for this piece
  int64_t value_price = 0;   // what the tenant pays for it in effect (covered: the commitment's price)
  int64_t list_price = 0;    // the offer's on-demand price in force (0: idle_stopped)
  const std::string* commitment = nullptr;  // covered pieces: the id of the commitment covering them
};

// Sums quantities per line key; amounts are computed once per line at the end.
class LineBook {
 public:
  struct Key {
    int kind;
    std::string project, job, allocation, offer, mode, rule;
    int64_t price;
    std::string extra;  // e.g. the calendar month of a volume line
    std::string commitment;  // commitment and reserved_covered lines: the commitment's id
    int64_t list_price = 0;  // GPU-time lines: the on-demand price in force (0: none)
    bool operator<(const Key& o) const {
      return std::tie(kind, project, job, allocation, offer, rule, price, extra, mode, commitment, list_price) <
             std::tie(o.kind, o.project, o.job, o.allocation, o.offer, o.rule, o.price, o.extra, o.mode, o.commitment,
                      o.list_price);
    }
  };
  struct Acc {
    __int128 qty = 0;
    TimeMs from = 0;
    TimeMs to = 0;
    int64_t den = 1;    // amount = price × qty / den
    int qty_scale = 0;  // displayed quantity = qty / 10^qty_scale
    std::string unit, price_unit;
    Message description;
    __int128 value = 0;  // covered_value × den (reserved_covered lines)
  };

  // Adds qty to the line; the first add fixes den, scale, units and description. `describe` is the
  // Message, or a callable making it: called only by the first add (most adds extend a line).
  template <class Describe>
  void add(const Key& k, __int128 qty, TimeMs from, TimeMs to, int64_t den, int qty_scale, const std::string& unit,
           const std::string& price_unit, Describe&& describe) {
    auto [it, fresh] = acc_.try_emplace(k);
    Acc& a = it->second;
    if (fresh) {
      Message m;
      if constexpr (std::is_invocable_v<Describe>)
        m = describe();
      else
        m = std::forward<Describe>(describe);
      a = Acc{0, from, to, den, qty_scale, unit, price_unit, std::move(m), 0};
    }
    a.qty += qty;
    a.from = std::min(a.from, from);
    a.to = std::max(a.to, to);
  }
  // A line whose amount is given exactly (credits, refunds).
  void add_direct(ChargeLine line);
  // Adds to the covered_value of a line already added (value in the line's den).
  void add_value(const Key& k, __int128 value) { acc_[k].value += value; }

  Result<std::vector<ChargeLine>> finish(Currency c) const;

 private:
  std::map<Key, Acc> acc_;
  std::vector<ChargeLine> direct_;
};

struct Ctx {
  const RatingInput& in;
  Currency cur;
  std::optional<TimeMs> exit;  // effective exit
  LineBook book;
  std::vector<Piece> pieces;   // every allocation's pieces inside the period
  std::vector<CommitmentShare> shares;  // rate_commitments
  std::optional<Error> credit_overflow;  // the first credit too large for an amount (rate_credits fails)
};

// Price of `offer` for `mode` at time t (spot: the market price in force, else the sheet's).
Result<int64_t> unit_price(const Ctx& c, const Offer& offer, BillingMode mode, TimeMs t);
// Commitment price per GPU-hour from the offer's sheet for its term.
Result<int64_t> commitment_price(const Offer& offer, const Commitment& cm);
TimeMs commitment_end(const Ctx& c, const Commitment& cm);  // term end, cut at an effective exit

Status rate_allocations(Ctx& c);   // pieces + usage lines + minimum increments
Status rate_commitments(Ctx& c);   // commitment lines (monthly pro rata or prepaid)
Status rate_volumes(Ctx& c);       // storage I/O and egress beyond allowances
Status rate_images(Ctx& c);        // images, artifacts and volumes kept, per GB-month beyond the allowance
Status rate_served(Ctx& c);        // per token and per QPS-month
Status rate_credits(Ctx& c);       // SLA credits and exit refunds (needs the pieces)

// The fee paid in effect (RatingResult::delivered, no credits) of the same input over [from, to):
// the "month's fee" of penalty clauses.
Result<Money> month_charges(const RatingInput& in, TimeMs from, TimeMs to);

const char* mode_name(BillingMode m);
std::string period_text(TimeMs from, TimeMs to);
// Sets a line's description: the message, and its English rendering.
void describe_line(ChargeLine& l, Message m);

}  // namespace gpurent::billing_detail
