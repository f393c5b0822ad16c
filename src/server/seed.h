// Seeds the demo world into an empty database through create_object (the POST path: same
// validation, same transactions), then issues one API token per demo user and writes them to
// "<db>.demo-tokens.json" (mode 600). Does nothing when suppliers already exist.
#pragma once

#include <string>

#include "server/app.h"

namespace gpurent {

// Returns a summary: {"seeded": bool, "counts": {...}, "tokens_file": "...", "price_source": "..."}.
Result<json> seed_demo_if_empty(App& app, const std::string& admin_user_id, const std::string& data_dir);

}  // namespace gpurent
