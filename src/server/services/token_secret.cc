#include "server/services/token_secret.h"

#include "core/ids.h"

namespace gpurent {

std::string new_token_secret() { return "gpr_" + random_hex(32); }
std::string token_hash(const std::string& secret) { return sha256_hex(secret); }

}  // namespace gpurent
