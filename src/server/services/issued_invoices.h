// Issued invoices and credit notes. At month close each tenant's month is rated once more (the
// same engine and inputs as GET /api/v1/invoices) and frozen per currency into an
// "issued-invoices" record: numbered per tenant and currency (<tenant>-<CUR>-000001), its lines,
// totals and a SHA-256 over that content, never changed after (payment and voiding change only
// its state). Corrections are credit notes ("credit-notes" records) that reference an issued
// invoice, numbered in their own series (<tenant>-<CUR>-CN-000001), never more than the
// invoice's total in all. A "month-closes" record marks a month closed for every tenant; it is
// written in state "closing" before the first tenant is rated and loses that state once every
// tenant's invoices are issued.
// Index columns of an issued invoice: name = its number, tenant_id, state, gpu_model = its
// currency and region = its month (what the numbering and a close's idempotency look up).
// Functions read the store and write through the control loop; callable from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/money.h"
#include "nlohmann/json.hpp"
#include "server/services/context.h"

namespace gpurent {

struct MonthCloseOutcome {
  std::string month;                 // "2026-11"
  bool already_closed = false;       // the month had been closed before: nothing issued now
  std::vector<std::string> issued;   // ids of the invoices issued by this close
  std::vector<std::string> failed;   // tenants whose month could not be rated (named in the log)
};

// Closes the calendar month starting at `month` (a UTC month start that has ended by `now`):
// every tenant with charges or credits in it gets one issued invoice per currency; a tenant whose
// invoice for that month and currency exists already is skipped (a close is idempotent). The
// month is marked closed only when every tenant was rated. `by`: the user id, or "" for the
// server's own pass.
Result<MonthCloseOutcome> close_month(ServiceContext& ctx, TimeMs month, TimeMs now, const std::string& by);

// The state of a month-closes record while its close runs (a closed month's record has none).
inline constexpr const char* kMonthClosing = "closing";

// The end of the last month closed or being closed for invoicing (a month-closes record in any
// state), INT64_MIN when none: usage dated before it is refused.
Result<TimeMs> invoicing_closed_through(StoreReader& store);
Result<TimeMs> invoicing_closed_through(StoreTx& tx);
// The end of the last month whose close has finished (its invoices all issued and frozen).
Result<TimeMs> invoices_frozen_through(StoreTx& tx);
// Where new billable records (usage samples, market windows, a trade's default) may start: at
// invoicing_closed_through and, where the cost firewall closes months by itself (`auto_close`), at
// the start of the month whose close is due at `now` (it ended more than `delay_ms` ago). What lies
// before it would reach no invoice.
Result<TimeMs> billable_from(StoreReader& store, TimeMs now, bool auto_close, int64_t delay_ms);
Result<TimeMs> billable_from(StoreTx& tx, TimeMs now, bool auto_close, int64_t delay_ms);

// How many months back an unclosed month is still found (and closed, and counted in balances).
inline constexpr int kMaxUnclosedMonths = 24;

// The ended months with no month-closes record (or one still closing), oldest first: from the month the first tenant
// was made in (at most kMaxUnclosedMonths back) to the previous month — or the one before it while `now` is less than
// `delay_ms` past the previous month's end.
Result<std::vector<TimeMs>> unclosed_months(StoreReader& store, TimeMs now, int64_t delay_ms);

// Every unclosed month (unclosed_months) closed, oldest first: the previous one once `now` is at
// least `delay_ms` past its end, and any earlier one a failed close left open (a close that keeps
// failing holds back no later month). What the cost firewall's pass calls; returns the first
// outcome with a failed tenant, else the last, or nullopt when nothing was due.
Result<std::optional<MonthCloseOutcome>> close_due_month(ServiceContext& ctx, TimeMs now, int64_t delay_ms);

// "sha256:<hex>" over an issued invoice's or credit note's immutable content (every key but the
// state keys: state, paid_at, payment_reference, voided_at, void_reason, credited).
std::string content_hash(const nlohmann::json& doc);

// The printable invoice (HTML that prints to A4), in English or Chinese (`lang` "en" or "zh"),
// with the credit notes issued against it.
std::string invoice_html(const nlohmann::json& invoice, const std::vector<nlohmann::json>& credit_notes,
                         const std::string& lang);

}  // namespace gpurent
