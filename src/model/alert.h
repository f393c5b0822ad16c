// Alert: what the cost firewall (billing/firewall.h) found, or a security alert (an artifact whose
// content changed after its upload: the Slurm executor raises it), and the stored alert (kind "alerts",
// id "alr_…") the server keeps of it: its state (active → resolved for a budget that no longer
// fires, or lifted by an admin), when it was first seen, and each webhook delivery. Written only
// by the server (services/cost_firewall.h; the lift route); schema: docs/api.md "Cost firewall: alerts and webhooks".
//
// decode_stored_alert() reads a stored document strictly by type, naming the field that is wrong,
// and ignores keys it does not know. Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/message.h"
#include "model/resource.h"

namespace gpurent {

enum class AlertKind {
  kCardDailyCost, kStorageIoShare, kEgressDailyCost, kBudgetBreach, kArtifactDigestMismatch,
  kBalanceLow, kBalanceExhausted,  // a tenant's balance or credit (billing/balance.h)
  kInstanceRelease                 // a stopped instance to be released, or released (model/instance.h)
};
inline constexpr EnumEntry<AlertKind> kAlertKindNames[] = {{AlertKind::kCardDailyCost, "card_daily_cost"},
                                                           {AlertKind::kStorageIoShare, "storage_io_share"},
                                                           {AlertKind::kEgressDailyCost, "egress_daily_cost"},
                                                           {AlertKind::kBudgetBreach, "budget_breach"},
                                                           {AlertKind::kArtifactDigestMismatch, "artifact_digest_mismatch"},
                                                           {AlertKind::kBalanceLow, "balance_low"},
                                                           {AlertKind::kBalanceExhausted, "balance_exhausted"},
                                                           {AlertKind::kInstanceRelease, "instance_release"}};

enum class AlertSeverity { kWarning, kCritical };
inline constexpr EnumEntry<AlertSeverity> kAlertSeverityNames[] = {{AlertSeverity::kWarning, "warning"},
                                                                   {AlertSeverity::kCritical, "critical"}};

struct Alert {
  // Stable identity for deduplication: "<kind>:<subject>:<YYYY-MM-DD>" for daily rules,
  // "<kind>:<project>:<YYYY-MM>" for month-to-date rules, "<kind>:<job id>:<artifact>" for an
  // artifact's digest. Example: "card_daily_cost:n1/3:2026-11-29".
  std::string key;
  AlertKind kind = AlertKind::kCardDailyCost;
  AlertSeverity severity = AlertSeverity::kWarning;
  std::string project;  // the project concerned; for a card, its only project that day, else ""
  std::string subject;  // "n1/3" (node/gpu) for a card, else the project
  TimeMs from = 0;      // what was measured: the day, or the month to the end of `day`
  TimeMs to = 0;
  std::string measured;   // exact decimal: money ("612.4" -> "612.40") or a percentage; a digest's: found
  std::string threshold;  // exact decimal, same unit; a digest's: expected
  std::string unit;       // the currency code ("USD"), "%", or "sha256"
  // What happened, as a message code with its arguments (src/messages/<lang>.json: alert.*);
  // the server stores it rendered in every language and as the code.
  Message message;
  // Effects the server enforces.
  bool freeze_egress = false;      // gateways should refuse egress and uploads > upload_limit_bytes
  int64_t upload_limit_bytes = 0;  // with freeze_egress; else 0
  bool hold_submissions = false;   // new submissions of the project held, the message as reason
                                   // (balance_exhausted: of every project of the tenant)
  bool stop_work = false;          // balance_exhausted: the tenant's running work is stopped (requeued, held)
  bool operator==(const Alert&) const = default;
};


// The alert as a document: key, kind, severity, project, subject, from, to (RFC 3339), measured,
// threshold, unit, message_en, message_zh (rendered from `message`), freeze_egress,
// upload_limit_bytes, hold_submissions, stop_work. The generic webhook body adds "event"
// (billing/webhook_format.h).
json alert_fields(const Alert& a);

enum class AlertState { kActive, kResolved, kLifted };
inline constexpr EnumEntry<AlertState> kAlertStateNames[] = {
    {AlertState::kActive, "active"}, {AlertState::kResolved, "resolved"}, {AlertState::kLifted, "lifted"}};

struct AlertDelivery {
  std::string webhook;  // its name
  TimeMs at = 0;
  std::optional<int64_t> status;     // the HTTP status the target answered
  std::optional<std::string> error;  // why nothing was delivered
  bool operator==(const AlertDelivery&) const = default;
};

struct StoredAlert {
  Alert alert;  // alert.message is the code; an alert stored before codes has its English text
  // As rendered when stored (an alert stored before codes keeps its own Chinese text here).
  std::string message_en, message_zh;
  std::string tenant, tenant_id, project_id;
  AlertState state = AlertState::kActive;
  TimeMs first_seen = 0;
  std::optional<TimeMs> resolved_at;
  std::optional<TimeMs> lifted_at;
  std::string lifted_by;  // the user who lifted it
  std::vector<AlertDelivery> deliveries;
  // Recorded, its webhooks not tried yet: the cost firewall delivers it (again after a restart
  // that came between the two).
  bool delivery_pending = false;
  bool operator==(const StoredAlert&) const = default;
};

// A fresh alert of tenant `tenant` seen first at `now`.
StoredAlert new_stored_alert(Alert a, std::string tenant, std::string tenant_id, std::string project_id, TimeMs now);
Result<StoredAlert> decode_stored_alert(const json& body);
json to_json(const StoredAlert& s);  // alert_fields plus the record's own keys and "text"/"text_message"

}  // namespace gpurent
