// Benchmark: the artifact store's chunked upload (server/services/artifact_store.h), the part of
// PUT …/content?offset=N after the HTTP front: each 1 MiB chunk written at its offset, on disk
// (fdatasync) and carried into the SHA-256 whose state is kept beside the file; the last chunk
// ends the digest, so it answers as fast as any other whatever the size. Beside it, in the same
// run, the baseline: the same bytes written to a file in one go, one fdatasync, then hashed once
// (what a server hashing at the end would do). Figures: MB/s over the whole file, and the
// slowest chunk and the last chunk in milliseconds.
// Usage: artifact_upload [MIB] [DIR]   (default 256 MiB in a temporary folder under /tmp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "server/services/artifact_store.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  const int64_t mib = argc > 1 ? std::max(1, std::atoi(argv[1])) : 256;
  std::string dir = argc > 2 ? argv[2] : "";
  if (dir.empty()) {
    char tmpl[] = "/tmp/gpurent-bench-artifacts-XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    dir = tmpl;
  }
  constexpr int64_t kChunk = 1 << 20;
  const int64_t total = mib * kChunk;
  std::string chunk(kChunk, '\0');
  std::mt19937_64 gen(42);
  for (size_t i = 0; i < chunk.size(); i += 8) {
    const uint64_t v = gen();
    std::memcpy(chunk.data() + i, &v, 8);
  }

  gpurent::ArtifactStore store(dir + "/store");
  if (!store.init().ok()) return 1;
  double slowest = 0, last = 0;
  const auto t0 = Clock::now();
  std::string digest;
  for (int64_t at = 0; at < total; at += kChunk) {
    const auto c0 = Clock::now();
    auto d = store.write_chunk("art_bench", at, chunk, total);
    if (!d) {
      std::fprintf(stderr, "write_chunk: %s\n", d.error().message.c_str());
      return 1;
    }
    const double took = ms_since(c0);
    slowest = std::max(slowest, took);
    last = took;
    if (*d) digest = **d;
  }
  const double upload_ms = ms_since(t0);

  // Baseline: one write, one fdatasync, one hash of the file.
  const std::string plain = dir + "/plain";
  const auto b0 = Clock::now();
  const int fd = ::open(plain.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  for (int64_t at = 0; at < total; at += kChunk)
    if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) return 1;
  ::fdatasync(fd);
  ::close(fd);
  const auto h0 = Clock::now();
  auto base_digest = gpurent::ArtifactStore::file_sha256(plain);
  const double hash_ms = ms_since(h0), base_ms = ms_since(b0);
  if (!base_digest || *base_digest != digest) {
    std::fprintf(stderr, "digests differ: %s vs %s\n", digest.c_str(), base_digest ? base_digest->c_str() : "?");
    return 1;
  }
  std::filesystem::remove_all(dir);
  const double mb = static_cast<double>(total) / 1e6;
  std::printf("artifact_upload: %lld MiB in 1 MiB chunks %.0f MB/s, slowest chunk %.1f ms, last chunk %.1f ms "
              "(baseline: one write + fdatasync + hash at the end %.0f MB/s, the end's hash alone %.0f ms)\n",
              static_cast<long long>(mib), mb / (upload_ms / 1000), slowest, last, mb / (base_ms / 1000), hash_ms);
  return 0;
}
