// `gpurent agent`: the node agent (docs/resources/usage.md#node-agent). On a GPU node it reads
// NVML (loaded at run time: agent/gpu_source.h) every --interval-s seconds and reports the node's
// GPUs as usage samples (POST /api/v1/usage, each batch under its own key), with a supplier's (or
// operator's) token. --gpu-sim FILE reads the simulated source instead. --count N stops after N
// reports (0: until interrupted). A report that fails is printed and not sent again (the loop goes
// on with the next reading); with --count 1 its exit status is the failure's. Before the first
// report it reads the node's record: a card UUID there that differs from this machine's at the
// same index stops it (--node names another machine).
#include <chrono>
#include <thread>

#include "agent/gpu_source.h"
#include "cli/commands.h"

namespace gpurent {

void add_agent_command(CLI::App& app, CliContext& ctx) {
  struct Opts {
    std::string node, gpu_sim, library = "libnvidia-ml.so.1";
    int64_t interval_s = 10, count = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("agent", "the node agent: report this node's GPUs (NVML, or --gpu-sim) as usage samples");
  cmd->add_option("--node", o->node, "the node's name or id as gpurent knows it")->required();
  auto* sim = cmd->add_option("--gpu-sim", o->gpu_sim, "read a simulated GPU source (JSON file) instead of NVML");
  cmd->add_option("--nvml-library", o->library, "the NVML library to load")->capture_default_str()->excludes(sim);
  cmd->add_option("--interval-s", o->interval_s, "seconds between reports")
      ->check(CLI::Range(int64_t{1}, int64_t{3600}))
      ->capture_default_str();
  cmd->add_option("--count", o->count, "stop after this many reports (0: until interrupted)")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o]() -> int {
      Result<std::unique_ptr<GpuSource>> source = Error::make(Code::kInternal, "no source");
      if (!o->gpu_sim.empty()) {
        auto doc = ctx.read_document(o->gpu_sim);
        if (!doc) return ctx.fail(doc.error());
        source = open_simulated_source(*doc);
      } else {
        source = open_nvml_source(o->library);
      }
      if (!source) return ctx.fail(source.error());
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      ctx.err() << "agent: node " << o->node << ", " << (*source)->describe() << ", every " << o->interval_s << " s\n";
      // Once, before reporting: where the node's record lists its cards' UUIDs, this machine's
      // must be those, or its readings would be stored as another machine's.
      // A server not reachable yet is no reason to stop: the reports are tried on as before. One
      // that answers no (the node unknown, the token not allowed to read it) is.
      auto node = c->get("/nodes" + seg(o->node));
      if (!node && !node.error().unreachable()) return ctx.fail(node.error());
      auto first = (*source)->read();  // the first report's reading
      if (!node)
        ctx.err() << "agent: node " << o->node << " could not be read to check its GPUs' UUIDs (" << node.error().detail
                  << "); reporting on\n";
      else if (first)
        if (auto why = node_uuid_mismatch(*node, *first)) return ctx.fail(Error::invalid("--node", *why));
      for (int64_t sent = 0; o->count == 0 || sent < o->count; ++sent) {
        if (sent > 0) std::this_thread::sleep_for(std::chrono::seconds(o->interval_s));
        auto gpus = sent == 0 ? std::move(first) : (*source)->read();
        if (!gpus) {
          rc = ctx.fail(gpus.error());
          continue;
        }
        const TimeMs at = ctx.now() - ctx.now() % 1000;  // whole seconds: the key of a resent batch
        auto r = c->post("/usage", agent_usage_batch(o->node, *gpus, at));
        if (!r) {
          rc = ctx.fail(r.error());
          continue;
        }
        rc = kExitOk;
        ctx.out() << "agent: " << format_rfc3339(at) << " sent " << gpus->size() << " GPU samples"
                  << (r->value("duplicate", false) ? " (already recorded)" : "") << "\n";
        ctx.out().flush();
      }
      return rc;
    };
  });
}

}  // namespace gpurent
