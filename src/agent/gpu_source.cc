// The agent's GPU sources (gpu_source.h): NVML through dlopen, and the simulated source.
#include "agent/gpu_source.h"

#include <dlfcn.h>

#include <cstring>
#include <map>

namespace gpurent {

namespace {

// NVML's C API as the driver's libnvidia-ml.so.1 exports it (nvml.h): only what the agent reads.
using nvmlReturn_t = int;  // NVML_SUCCESS = 0
constexpr nvmlReturn_t kNvmlSuccess = 0;
using nvmlDevice_t = struct nvmlDevice_st*;
struct NvmlUtilization {
  unsigned int gpu, memory;  // percent over the last sample period
};
struct NvmlMemory {
  unsigned long long total, free, used;  // bytes
};
constexpr int kNvmlClockSm = 1;  // nvmlClockType_t NVML_CLOCK_SM

struct NvmlApi {
  nvmlReturn_t (*init)() = nullptr;                                   // nvmlInit_v2
  nvmlReturn_t (*shutdown)() = nullptr;                               // nvmlShutdown
  const char* (*error_string)(nvmlReturn_t) = nullptr;                // nvmlErrorString
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;      // nvmlSystemGetDriverVersion
  nvmlReturn_t (*count)(unsigned int*) = nullptr;                     // nvmlDeviceGetCount_v2
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;      // nvmlDeviceGetHandleByIndex_v2
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;  // nvmlDeviceGetUUID
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;  // nvmlDeviceGetUtilizationRates
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*) = nullptr;            // nvmlDeviceGetMemoryInfo
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;           // nvmlDeviceGetPowerUsage (mW)
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*) = nullptr;      // nvmlDeviceGetClockInfo (MHz)
};

class NvmlSource final : public GpuSource {
 public:
  NvmlSource(void* lib, NvmlApi api, std::string library, std::string driver)
      : lib_(lib), api_(api), library_(std::move(library)), driver_(std::move(driver)) {}
  ~NvmlSource() override {
    api_.shutdown();
    dlclose(lib_);
  }
  std::string describe() const override { return "NVML, driver " + driver_ + " (" + library_ + ")"; }

  Result<std::vector<AgentGpu>> read() override {
    unsigned int n = 0;
    if (nvmlReturn_t r = api_.count(&n); r != kNvmlSuccess) return fail("nvmlDeviceGetCount_v2", r);
    std::vector<AgentGpu> out;
    for (unsigned int i = 0; i < n && i < 64; ++i) {
      nvmlDevice_t d = nullptr;
      if (nvmlReturn_t r = api_.handle(i, &d); r != kNvmlSuccess) return fail("nvmlDeviceGetHandleByIndex_v2", r);
      AgentGpu g;
      g.index = i;
      char uuid[96] = {};
      if (api_.uuid(d, uuid, sizeof uuid - 1) == kNvmlSuccess) g.uuid = uuid;
      NvmlUtilization u{};
      // A GPU whose utilization NVML cannot read (a MIG-enabled one) is left out, not guessed.
      if (api_.utilization(d, &u) != kNvmlSuccess) continue;
      g.utilization_pct = std::min<int64_t>(u.gpu, 100);
      NvmlMemory m{};
      if (api_.memory(d, &m) == kNvmlSuccess) g.memory_used_mib = static_cast<int64_t>(m.used / (1024 * 1024));
      unsigned int v = 0;
      if (api_.power(d, &v) == kNvmlSuccess) g.power_mw = v;
      if (api_.clock(d, kNvmlClockSm, &v) == kNvmlSuccess) g.sm_clock_mhz = v;
      out.push_back(std::move(g));
    }
    return out;
  }

 private:
  Error fail(const char* fn, nvmlReturn_t r) const {
    return Error::make(Code::kUnavailable, std::string("NVML ") + fn + ": " + api_.error_string(r));
  }
  void* lib_;
  NvmlApi api_;
  std::string library_, driver_;
};

class SimulatedSource final : public GpuSource {
 public:
  struct Gpu {
    int64_t index = 0;
    std::string uuid;
    std::vector<int64_t> util, memory, power;
  };
  explicit SimulatedSource(std::vector<Gpu> gpus) : gpus_(std::move(gpus)) {}
  std::string describe() const override { return "simulated GPU source (" + std::to_string(gpus_.size()) + " GPUs)"; }
  Result<std::vector<AgentGpu>> read() override {
    std::vector<AgentGpu> out;
    for (const Gpu& g : gpus_) {
      AgentGpu a;
      a.index = g.index;
      a.uuid = g.uuid;
      a.utilization_pct = g.util[step_ % g.util.size()];
      if (!g.memory.empty()) a.memory_used_mib = g.memory[step_ % g.memory.size()];
      if (!g.power.empty()) a.power_mw = g.power[step_ % g.power.size()];
      out.push_back(std::move(a));
    }
    ++step_;
    return out;
  }

 private:
  std::vector<Gpu> gpus_;
  size_t step_ = 0;
};

}  // namespace

Result<std::unique_ptr<GpuSource>> open_nvml_source(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return Error::make(Code::kUnavailable, "cannot load NVML (" + library + "): " + (why ? why : "unknown error") +
                                               " — is the NVIDIA driver installed? (or use --gpu-sim FILE)");
  }
  NvmlApi api;
  std::string missing;
  auto bind = [&](auto& fn, const char* name) {
    void* sym = dlsym(lib, name);
    if (!sym && missing.empty()) missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
  };
  bind(api.init, "nvmlInit_v2");
  bind(api.shutdown, "nvmlShutdown");
  bind(api.error_string, "nvmlErrorString");
  bind(api.driver_version, "nvmlSystemGetDriverVersion");
  bind(api.count, "nvmlDeviceGetCount_v2");
  bind(api.handle, "nvmlDeviceGetHandleByIndex_v2");
  bind(api.uuid, "nvmlDeviceGetUUID");
  bind(api.utilization, "nvmlDeviceGetUtilizationRates");
  bind(api.memory, "nvmlDeviceGetMemoryInfo");
  bind(api.power, "nvmlDeviceGetPowerUsage");
  bind(api.clock, "nvmlDeviceGetClockInfo");
  if (!missing.empty()) {
    dlclose(lib);
    return Error::make(Code::kUnavailable, library + " has no " + missing + " (an NVML older than the agent needs)");
  }
  if (nvmlReturn_t r = api.init(); r != kNvmlSuccess) {
    std::string why = api.error_string(r);
    dlclose(lib);
    return Error::make(Code::kUnavailable, "NVML nvmlInit_v2: " + why);
  }
  char version[96] = {};
  if (api.driver_version(version, sizeof version - 1) != kNvmlSuccess) std::strcpy(version, "unknown");
  return std::unique_ptr<GpuSource>(new NvmlSource(lib, api, library, version));
}

Result<std::unique_ptr<GpuSource>> open_simulated_source(const json& doc) {
  FieldErrors errs;
  Fields f(doc, "", errs);
  if (!f.valid_object()) return errs.to_error();
  std::vector<SimulatedSource::Gpu> gpus;
  auto series = [&](Fields& g, const char* key, int64_t max, bool required) {
    std::vector<int64_t> out;
    const json* v = g.raw(key);
    if (!v) {
      if (required) g.error(key, "is required: a list of whole numbers");
      return out;
    }
    if (!v->is_array() || v->empty() || v->size() > 10'000) {
      g.error(key, "must be a list of 1 to 10000 whole numbers");
      return out;
    }
    for (const json& x : *v) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > max) {
        g.error(key, "must hold whole numbers from 0 to " + std::to_string(max));
        return std::vector<int64_t>{};
      }
      out.push_back(x.get<int64_t>());
    }
    return out;
  };
  f.objects("gpus", true, 64, [&](Fields& g, size_t) {
    SimulatedSource::Gpu gpu;
    gpu.index = g.integer("index", 0, 63);
    gpu.uuid = g.opt_str("uuid", {.min_len = 0, .max_len = 80}).value_or("");
    gpu.util = series(g, "utilization_pct", 100, true);
    gpu.memory = series(g, "memory_used_mib", 16'777'216, false);
    gpu.power = series(g, "power_mw", 10'000'000, false);
    gpus.push_back(std::move(gpu));
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return std::unique_ptr<GpuSource>(new SimulatedSource(std::move(gpus)));
}

std::optional<std::string> node_uuid_mismatch(const json& node, const std::vector<AgentGpu>& gpus) {
  if (!node.is_object() || !node.value("gpus", json()).is_array()) return std::nullopt;
  std::map<int64_t, std::string> listed;  // index -> uuid, as the node's record lists them
  for (const json& g : node["gpus"])
    if (g.is_object() && g.value("index", json()).is_number_integer() && g.value("uuid", json()).is_string())
      listed[g["index"].get<int64_t>()] = g["uuid"].get<std::string>();
  for (const AgentGpu& g : gpus) {
    auto it = listed.find(g.index);
    if (g.uuid.empty() || it == listed.end() || it->second == g.uuid) continue;
    return "GPU " + std::to_string(g.index) + " of this machine is " + g.uuid + ", but node " + node.value("name", "?") +
           " lists " + it->second + " there: does --node name this machine?";
  }
  return std::nullopt;
}

json agent_usage_batch(const std::string& node, const std::vector<AgentGpu>& gpus, TimeMs at) {
  json samples = json::array();
  for (const AgentGpu& g : gpus) {
    json s = {{"at", format_rfc3339(at)}, {"node", node}, {"gpu", g.index}, {"utilization_pct", g.utilization_pct}};
    if (g.memory_used_mib) s["memory_used_mib"] = *g.memory_used_mib;
    if (g.power_mw) s["power_mw"] = *g.power_mw;
    if (g.sm_clock_mhz) s["sm_clock_mhz"] = *g.sm_clock_mhz;
    samples.push_back(std::move(s));
  }
  return {{"idempotency_key", "agent-" + node + "-" + std::to_string(at)}, {"gpu_samples", samples}};
}

}  // namespace gpurent
