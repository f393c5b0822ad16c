// The fuzz targets' driver in the ordinary (GCC) build, where libFuzzer is not available: runs
// every seed file, then random mutations of them (bit flips, byte changes, insertions, deletions,
// truncations, splices of two seeds, repeated chunks) for a bounded time. This is a smoke pass
// in the test suite, not coverage-guided fuzzing: fuzz/run builds the same targets with clang's
// libFuzzer, AddressSanitizer and UBSan for the real thing.
//   fuzz_NAME [--seconds S] [--seed N] CORPUS_DIR...
// A crash or abort fails the process; the input being run is written to ./fuzz-crash-NAME first.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "targets/fuzz_target.h"

namespace {

std::string current_input;  // what runs now, for the crash report
std::string crash_file;

void run(const std::string& input) {
  current_input = input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  std::string s = seeds[pick(seeds.size())];
  const int steps = 1 + static_cast<int>(pick(8));
  static const char* kTokens[] = {"{",       "}",     "[",    "]",       "\"",  ",",  ":",
                                  "-1",      "1e999", "null", "\\u0000", "\n",  "  ", "&",
                                  "=",       "%",     "%ff",  "*a",      "&a ", "- ", "9223372036854775808",
                                  "0.000001"};
  for (int i = 0; i < steps; ++i) {
    switch (pick(8)) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
      case 2:
        s.insert(pick(s.size() + 1), kTokens[pick(std::size(kTokens))]);
        break;
      case 3:
        if (!s.empty()) {
          size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
        }
        break;
      case 4:
        s.resize(pick(s.size() + 1));
        break;
      case 5: {
        const std::string& other = seeds[pick(seeds.size())];
        if (!other.empty()) s.insert(pick(s.size() + 1), other.substr(pick(other.size())));
        break;
      }
      case 6:
        if (!s.empty()) {
          size_t at = pick(s.size()), len = 1 + pick(std::min<size_t>(32, s.size() - at));
          std::string chunk = s.substr(at, len);
          for (size_t r = pick(16); r > 0; --r) s.insert(at, chunk);
        }
        break;
      default: {
        size_t at = pick(s.size() + 1);
        s.insert(at, std::string(1 + pick(4), static_cast<char>(rng())));
        break;
      }
    }
  }
  if (s.size() > 64 * 1024) s.resize(64 * 1024);
  return s;
}

extern "C" void on_abort(int) {
  std::ofstream(crash_file, std::ios::binary) << current_input;
  std::fprintf(stderr, "fuzz: crash on an input of %zu bytes, written to %s\n", current_input.size(),
               crash_file.c_str());
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  uint64_t seed = 1;
  std::vector<std::string> seeds;
  std::string name = std::filesystem::path(argv[0]).filename();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::stoull(argv[++i]);
    } else if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a)) {
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        seeds.push_back(ss.str());
      }
    } else {
      std::cerr << name << ": no such corpus folder: " << a << "\n";
      return 2;
    }
  }
  if (seeds.empty()) {
    std::cerr << name << ": no seed inputs (give the corpus folder)\n";
    return 2;
  }
  crash_file = "fuzz-crash-" + name;
  std::signal(SIGABRT, on_abort);
  std::signal(SIGSEGV, on_abort);
  for (const auto& s : seeds) run(s);
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t n = seeds.size();
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 64; ++i, ++n) run(mutate(seeds, rng));
  }
  std::printf("%s: %llu inputs (%zu seeds, then mutations for %.1f s, seed %llu): no crash\n", name.c_str(),
              static_cast<unsigned long long>(n), seeds.size(), seconds, static_cast<unsigned long long>(seed));
  return 0;
}
