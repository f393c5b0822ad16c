// Seeds the demo world into an empty database through create_object (the POST path: same
// validation, same transactions), then issues one API token per demo user and writes them to
// "<db>.demo-tokens.json" (mode 600). Does nothing when suppliers already exist.
#pragma once

#include <string>

#include "server/api/app.h"

namespace gpurent {

// The principal a demo object is created by: the operator `op`, or (tenant_name set) that
// tenant's first tenant_admin user.
Result<Principal> demo_creator(App& app, const Principal& op, const std::string& tenant_name);

// Returns a summary: {"seeded": bool, "counts": {...}, "tokens_file": "...", "price_source": "..."}.
// `present` is the demo's now — the end of the past days it replays after seeding, when it does:
// its market book is for the UTC day after it, so it is still open when the server listens.
Result<json> seed_demo_if_empty(App& app, const std::string& admin_user_id, const std::string& data_dir,
                                TimeMs present);

// Closes the month before now (the demo's contracts bill reserved commitments from November 2026,
// so it has invoices to issue) and credits the first issued invoice with a goodwill credit note,
// so finance sees issued, numbered invoices and a correction at once. Run after the demo week's
// replay, which may add usage to that month. Returns {"month", "issued", "credit_notes"}.
Result<json> seed_demo_invoices(App& app, const std::string& admin_user_id);

}  // namespace gpurent
