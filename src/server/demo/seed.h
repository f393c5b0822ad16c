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
Result<json> seed_demo_if_empty(App& app, const std::string& admin_user_id, const std::string& data_dir);

}  // namespace gpurent
