// Typed ids: a TenantId is not a JobId. Ids are opaque strings "<prefix>_<16 hex>" minted by the
// store; user-chosen names are separate, unique within their scope.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace gpurent {

template <class Tag>
struct Id {
  std::string value;
  bool empty() const { return value.empty(); }
  auto operator<=>(const Id&) const = default;
};

struct SupplierTag {};
struct NodeTag {};
struct OfferTag {};
struct TenantTag {};
struct ProjectTag {};
struct UserTag {};
struct TokenTag {};
struct JobTag {};

using SupplierId = Id<SupplierTag>;
using NodeId = Id<NodeTag>;
using OfferId = Id<OfferTag>;
using TenantId = Id<TenantTag>;
using ProjectId = Id<ProjectTag>;
using UserId = Id<UserTag>;
using TokenId = Id<TokenTag>;
using JobId = Id<JobTag>;

// "sup_3f9a0c2b7d1e4a65": prefix + '_' + 16 lowercase hex digits from a CSPRNG, or, after
// use_reproducible_ids(), from a counter mixed by SplitMix64 (the same ids in the same order on
// every run: `gpurent serve --demo-clock`, scripts/invoice-snapshot). Token secrets stay random.
std::string new_id(const char* prefix);
void use_reproducible_ids(uint64_t seed);  // process-wide; call before any thread creates ids
void use_random_ids();                     // back to the CSPRNG (the default)
// 32 random bytes as 64 hex digits (API token secret).
std::string random_hex(size_t bytes);
// Lowercase hex SHA-256 of s.
std::string sha256_hex(const std::string& s);

}  // namespace gpurent
