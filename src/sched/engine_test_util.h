// Helpers for the engine's unit tests: an engine made from a config, and an 8-GPU H100 SXM node.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sched/engine.h"

namespace gpurent::testing {

inline std::unique_ptr<SchedEngine> make_engine(const SchedConfig& cfg) {
  auto made = SchedEngine::make(cfg);
  EXPECT_TRUE(made.ok());
  return made.ok() ? std::move(*made) : nullptr;
}

// Node `id`: 8 H100 SXM GPUs in NVLink domain `domain`, 64 cores, 512 GiB.
inline void add_h100_node(SchedEngine& e, const std::string& id, const std::string& domain) {
  SchedNode n{.id = id,
              .gpu_model = "h100-sxm5-80gb",
              .gpu_memory_gib = 80,
              .cpu_cores = 64,
              .memory_gib = 512,
              .gpu_domains = std::vector<std::string>(8, domain)};
  EXPECT_TRUE(e.add_node(n).ok());
}

}  // namespace gpurent::testing
