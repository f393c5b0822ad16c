#include "core/ids.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <atomic>
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

namespace {
std::atomic<bool> g_reproducible{false};
std::atomic<uint64_t> g_next{0};
}  // namespace

void use_reproducible_ids(uint64_t seed) {
  g_next.store(seed, std::memory_order_relaxed);
  g_reproducible.store(true, std::memory_order_release);
}

void use_random_ids() { g_reproducible.store(false, std::memory_order_release); }

std::string new_id(const char* prefix) {
  if (!g_reproducible.load(std::memory_order_acquire)) return std::string(prefix) + "_" + random_hex(8);
  uint64_t z = g_next.fetch_add(0x9e3779b97f4a7c15ULL, std::memory_order_relaxed) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;  // SplitMix64's finaliser
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(z >> (56 - 8 * i));
  return std::string(prefix) + "_" + to_hex(b, 8);
}

std::string sha256_hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), md, &len, EVP_sha256(), nullptr);
  return to_hex(md, len);
}

}  // namespace gpurent
