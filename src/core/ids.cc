#include "core/ids.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace gpurent {

static std::string to_hex(const unsigned char* p, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 15];
  }
  return out;
}

std::string random_hex(size_t bytes) {
  std::string buf(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(bytes)) != 1)
    throw std::runtime_error("RAND_bytes failed");
  return to_hex(reinterpret_cast<const unsigned char*>(buf.data()), bytes);
}

std::string new_id(const char* prefix) { return std::string(prefix) + "_" + random_hex(8); }

std::string sha256_hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), md, &len, EVP_sha256(), nullptr);
  return to_hex(md, len);
}

}  // namespace gpurent
