// Enumerations and string formats shared by the supply side of the model (suppliers, nodes,
// offers): each enum has one EnumEntry table giving its wire names (snake_case, except ISO 4217
// currency codes), so the parser, the JSON writer, the docs and the CLI agree on one spelling.
// Constants only; thread-safe.
#pragma once

#include "core/fields.h"
#include "core/money.h"

namespace gpurent {

// Security and compliance certifications a supplier holds (audited, current).
enum class Certification {
  kIso27001,         // ISO/IEC 27001 information security management
  kIso27017,         // ISO/IEC 27017 cloud security controls
  kIso27018,         // ISO/IEC 27018 protection of personal data in public clouds
  kIso27701,         // ISO/IEC 27701 privacy information management
  kIso9001,          // ISO 9001 quality management
  kSoc1,             // SOC 1 (SSAE 18) report
  kSoc2,             // SOC 2 type II report
  kSoc3,             // SOC 3 report
  kPciDss,           // PCI DSS
  kHipaa,            // HIPAA attestation
  kCsaStar,          // Cloud Security Alliance STAR
  kC5,               // BSI C5 (Germany)
  kFedrampModerate,  // FedRAMP Moderate
  kFedrampHigh,      // FedRAMP High
  kMlps2,            // 等保二级 (China MLPS 2.0 level 2)
  kMlps3,            // 等保三级 (China MLPS 2.0 level 3)
  kMlps4,            // 等保四级 (China MLPS 2.0 level 4)
};
inline constexpr EnumEntry<Certification> kCertifications[] = {
    {Certification::kIso27001, "iso27001"},
    {Certification::kIso27017, "iso27017"},
    {Certification::kIso27018, "iso27018"},
    {Certification::kIso27701, "iso27701"},
    {Certification::kIso9001, "iso9001"},
    {Certification::kSoc1, "soc1"},
    {Certification::kSoc2, "soc2"},
    {Certification::kSoc3, "soc3"},
    {Certification::kPciDss, "pci_dss"},
    {Certification::kHipaa, "hipaa"},
    {Certification::kCsaStar, "csa_star"},
    {Certification::kC5, "c5"},
    {Certification::kFedrampModerate, "fedramp_moderate"},
    {Certification::kFedrampHigh, "fedramp_high"},
    {Certification::kMlps2, "mlps2"},
    {Certification::kMlps3, "mlps3"},
    {Certification::kMlps4, "mlps4"},
};

// Remote-DMA capability of a network interface.
enum class RdmaType { kInfiniband, kRoceV2, kNone };
inline constexpr EnumEntry<RdmaType> kRdmaTypes[] = {
    {RdmaType::kInfiniband, "infiniband"},
    {RdmaType::kRoceV2, "roce_v2"},
    {RdmaType::kNone, "none"},
};

// Whether the scheduler may place new work on a node. `drained`: running work finishes, nothing new
// starts; `unavailable`: out of service (fault, maintenance).
enum class NodeState { kAvailable, kUnavailable, kDrained };
inline constexpr EnumEntry<NodeState> kNodeStates[] = {
    {NodeState::kAvailable, "available"},
    {NodeState::kUnavailable, "unavailable"},
    {NodeState::kDrained, "drained"},
};

// The moment an offer starts billing a GPU: when the API call is accepted, when the instance is
// running (container/process started), or when it is ready (today the moment it runs: there is no separate readiness check).
enum class BillingStart { kApiCall, kRunning, kReady };
inline constexpr EnumEntry<BillingStart> kBillingStarts[] = {
    {BillingStart::kApiCall, "api_call"},
    {BillingStart::kRunning, "running"},
    {BillingStart::kReady, "ready"},
};

// What an offer does with an idle GPU: bill it in full, bill it at a discount, or stop it.
enum class IdleAction { kCharge, kDiscount, kStop };
inline constexpr EnumEntry<IdleAction> kIdleActions[] = {
    {IdleAction::kCharge, "charge"},
    {IdleAction::kDiscount, "discount"},
    {IdleAction::kStop, "stop"},
};

// ISO 4217 codes (upper case on the wire, as everywhere in finance).
inline constexpr EnumEntry<Currency> kCurrencies[] = {
    {Currency::kUSD, "USD"},
    {Currency::kCNY, "CNY"},
};

// Region: a two-letter area then one to three '-'-separated parts ("cn-east", "us-west-2").
inline constexpr const char* kRegionPattern = "[a-z]{2}(-[a-z0-9]+){1,3}";
inline constexpr const char* kRegionHelp = "pattern.region";
inline constexpr StrRule kRegionRule{.min_len = 4, .max_len = 63, .pattern = kRegionPattern, .pattern_help = kRegionHelp};

// Country: ISO 3166-1 alpha-2, upper case ("CN", "US").
inline constexpr const char* kCountryPattern = "[A-Z]{2}";
inline constexpr const char* kCountryHelp = "pattern.country";

// A name unique within its scope (site, node, offer, supplier).
inline constexpr StrRule kSlugRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};

}  // namespace gpurent
