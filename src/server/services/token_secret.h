// API token secrets: "gpr_" + 64 hex digits from a CSPRNG, stored only as their SHA-256 (the
// secret is shown once, when it is minted). Thread-safe.
#pragma once

#include <string>

namespace gpurent {

std::string new_token_secret();
std::string token_hash(const std::string& secret);

}  // namespace gpurent
