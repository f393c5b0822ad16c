#include "model/job.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "catalog/scenario_files_test_util.h"
#include "model/model_test_util.h"

#include "catalog/gpu_catalog.h"
#include "core/yaml_json.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;

json valid_training() {
  return json::parse(R"({"name":"resnet-sweep","project":"vision","kind":"training","workers":2,
    "gpus_per_worker":8,"resources":{"cpu_cores":64,"memory_gib":512},
    "constraints":{"gpu_models":["h100-sxm5-80gb","H100-SXM"],"form_factor":"sxm","min_gpu_memory_gib":80,
                   "rdma":"infiniband","placement":"same_nvlink_domain"},
    "billing":{"mode":"on_demand","max_price_per_gpu_hour":"2.75"},
    "image":"nvcr.io/nvidia/pytorch:24.05-py3","command":["torchrun","train.py"],
    "env":{"NCCL_DEBUG":"INFO"},"expected_duration_seconds":3600,"time_limit_seconds":7200,"fault_retries":2,"workdir":"/data/runs/resnet",
    "labels":{"team":"vision"}})");
}

json valid_inference() {
  return json::parse(R"({"name":"chat","project":"vision","kind":"inference","gpu_milli":500,
    "replicas":{"min":1,"max":4},"image":"vllm/vllm-openai:v0.5.0"})");
}


void expect_round_trip(const Job& j) {
  json doc = to_json(j);
  auto back = parse_job(doc, j.billing.max_price_per_gpu_hour ? j.billing.max_price_per_gpu_hour->currency()
                                                              : Currency::kUSD);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << doc.dump(2);
  EXPECT_EQ(*back, j);
  EXPECT_EQ(to_json(*back), doc);
}

TEST(Job, ParsesTrainingJobAndRoundTrips) {
  auto j = parse_job(valid_training(), Currency::kCNY);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->kind, JobKind::kTraining);
  EXPECT_EQ(j->workers, 2);
  EXPECT_EQ(j->gpus_per_worker, 8);
  EXPECT_EQ(j->gpu_milli, std::nullopt);
  EXPECT_EQ(j->gpu_milli_per_worker(), 8000);
  EXPECT_FALSE(j->cpu_only());
  EXPECT_EQ(j->resources.cpu_cores, 64);
  EXPECT_EQ(j->constraints.gpu_models, (std::vector<std::string>{"h100-sxm5-80gb", "H100-SXM"}));
  EXPECT_EQ(j->constraints.form_factor, FormFactor::kSxm);
  EXPECT_EQ(j->constraints.rdma, RdmaRequirement::kInfiniband);
  EXPECT_EQ(j->constraints.placement, PlacementRule::kSameNvlinkDomain);
  EXPECT_EQ(j->priority_class, PriorityClass::kNormal);
  EXPECT_EQ(j->billing.max_price_per_gpu_hour, Money(2'750'000, Currency::kCNY));
  EXPECT_EQ(j->env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(j->fault_retries, 2);
  EXPECT_EQ(j->status.state, JobState::kPending);
  expect_round_trip(*j);
  EXPECT_EQ(to_json(*j)["billing"]["max_price_per_gpu_hour"], "2.75");
}

TEST(Job, DefaultsFollowTheKind) {
  auto j = parse_job(json::parse(R"({"name":"poke","project":"vision","kind":"debug","gpus_per_worker":1,
                                     "image":"ubuntu:22.04"})"),
                     Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->workers, 1);
  EXPECT_EQ(j->fault_retries, 0);
  EXPECT_FALSE(to_json(*j).contains("fault_retries"));
  EXPECT_EQ(j->priority_class, PriorityClass::kLow);
  EXPECT_EQ(j->billing.mode, BillingMode::kOnDemand);
  EXPECT_EQ(j->billing.max_price_per_gpu_hour, std::nullopt);
  EXPECT_EQ(j->constraints.rdma, RdmaRequirement::kNone);
  EXPECT_EQ(j->constraints.placement, PlacementRule::kAny);
  EXPECT_TRUE(j->command.empty());
  EXPECT_EQ(j->replicas, std::nullopt);
  expect_round_trip(*j);

  EXPECT_EQ(default_priority(JobKind::kInference), PriorityClass::kHigh);
  EXPECT_EQ(default_priority(JobKind::kTraining), PriorityClass::kNormal);
  EXPECT_EQ(default_priority(JobKind::kDebug), PriorityClass::kLow);
  EXPECT_EQ(default_priority(JobKind::kBatch), PriorityClass::kLow);

  json body = valid_training();
  body["priority_class"] = "best_effort";
  EXPECT_EQ(parse_job(body, Currency::kUSD)->priority_class, PriorityClass::kBestEffort);
}

TEST(Job, ParsesFractionalInference) {
  auto j = parse_job(valid_inference(), Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->gpu_milli, 500);
  EXPECT_EQ(j->gpus_per_worker, 0);
  EXPECT_EQ(j->gpu_milli_per_worker(), 500);
  EXPECT_FALSE(j->cpu_only());
  EXPECT_EQ(j->priority_class, PriorityClass::kHigh);
  EXPECT_EQ(j->replicas, (Replicas{1, 4}));
  json doc = to_json(*j);
  EXPECT_FALSE(doc.contains("gpus_per_worker"));
  expect_round_trip(*j);
}

TEST(Job, ParsesCpuOnlyJob) {
  auto j = parse_job(json::parse(R"({"name":"etl","project":"vision","kind":"batch","workers":3,"gpus_per_worker":0,
                                     "resources":{"cpu_cores":16,"memory_gib":64},"command":["python","etl.py"]})"),
                     Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_TRUE(j->cpu_only());
  EXPECT_EQ(j->gpu_milli_per_worker(), 0);
  EXPECT_EQ(j->image, std::nullopt);
  expect_round_trip(*j);
}

TEST(Job, ServerSetFieldsAreEmittedButNeverRead) {
  auto j = parse_job(valid_training(), Currency::kUSD).value();
  j.tenant_id = "ten_0123456789abcdef";
  j.project_id = "prj_0123456789abcdef";
  j.status.state = JobState::kRunning;
  j.status.reason = verbatim("started");
  j.status.updated_at = parse_rfc3339("2026-11-29T10:00:00Z", "t").value();
  j.status.placement = {{0, 0, "nod_00000000000000a1", {0, 1, 2, 3, 4, 5, 6, 7}, 0},
                        {0, 1, "nod_00000000000000a2", {0, 1, 2, 3, 4, 5, 6, 7}, 0}};
  j.status.fault_retries_used = 1;
  json doc = to_json(j);
  EXPECT_EQ(doc["tenant_id"], "ten_0123456789abcdef");
  EXPECT_EQ(doc["status"]["fault_retries_used"], 1);
  EXPECT_EQ(doc["status"]["state"], "running");
  EXPECT_EQ(doc["status"]["updated_at"], "2026-11-29T10:00:00.000Z");
  EXPECT_EQ(doc["status"]["placement"][1]["node"], "nod_00000000000000a2");

  doc["id"] = "job_0123456789abcdef";
  doc["version"] = 7;
  doc["created_at"] = "2026-11-29T09:00:00Z";
  auto back = parse_job(doc, Currency::kUSD);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->tenant_id, "");
  EXPECT_EQ(back->project_id, "");
  EXPECT_EQ(back->status, JobStatus{});  // a client cannot set its job's state

  auto status = parse_job_status(doc["status"], "status");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(*status, j.status);
  back->tenant_id = j.tenant_id;
  back->project_id = j.project_id;
  back->status = *status;
  EXPECT_EQ(*back, j);

  IndexCols idx = index_of(j);
  EXPECT_EQ(idx.name, "resnet-sweep");
  EXPECT_EQ(idx.tenant_id, "ten_0123456789abcdef");
  EXPECT_EQ(idx.project_id, "prj_0123456789abcdef");
  EXPECT_EQ(idx.state, "running");
  EXPECT_EQ(idx.gpu_model, "h100-sxm5-80gb");
  j.constraints.gpu_models.clear();
  EXPECT_EQ(index_of(j).gpu_model, "");
}

TEST(Job, RejectsEachBadField) {
  struct Case {
    const char* patch;  // JSON merge patch on valid_training() (null removes a key)
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"name":null})", "name", "is required"},
      {R"({"name":"Resnet_Sweep"})", "name", "lowercase letters"},
      {R"({"project":null})", "project", "is required"},
      {R"({"project":"My Project"})", "project", "an id such as"},
      {R"({"kind":null})", "kind", "is required (one of: training, inference, debug, batch)"},
      {R"({"kind":"train"})", "kind", "unknown value 'train'"},
      {R"({"workers":0})", "workers", "must be at least 1 (got 0)"},
      {R"({"workers":1025})", "workers", "must be at most 1024"},
      {R"({"workers":"2"})", "workers", "must be an integer"},
      {R"({"gpus_per_worker":null})", "gpus_per_worker", "is required: whole GPUs per worker"},
      {R"({"gpus_per_worker":17})", "gpus_per_worker", "must be at most 16"},
      {R"({"gpus_per_worker":0.5})", "gpus_per_worker", "whole number"},
      {R"({"gpu_milli":500})", "gpu_milli", "cannot be combined with gpus_per_worker"},
      {R"({"gpus_per_worker":null,"gpu_milli":500,"workers":1,"constraints":{"placement":"any"}})", "gpu_milli",
       "only for inference and debug jobs (kind is training)"},
      {R"({"kind":"batch","gpus_per_worker":null,"gpu_milli":1000,"workers":1})", "gpu_milli", "at most 999"},
      {R"({"replicas":{"min":1,"max":2}})", "replicas", "is only for inference jobs (kind is training)"},
      {R"({"resources":{"cpu_cores":0}})", "resources.cpu_cores", "must be at least 1"},
      {R"({"resources":{"memory_gib":16385}})", "resources.memory_gib", "must be at most 16384"},
      {R"({"resources":{"gpus":1}})", "resources.gpus", "unknown field"},
      {R"({"constraints":{"gpu_models":["h100-sxm5-80gb","h100-sxm5-80gb"]}})", "constraints.gpu_models[1]",
       "repeats 'h100-sxm5-80gb' (already at index 0)"},
      {R"({"constraints":{"gpu_models":[" h100"]}})", "constraints.gpu_models[0]", "no leading or trailing space"},
      {R"({"constraints":{"gpu_models":"h100"}})", "constraints.gpu_models", "must be a list of strings"},
      {R"({"constraints":{"nodes":["gpu-01","gpu-01"]}})", "constraints.nodes[1]", "repeats 'gpu-01' (already at index 0)"},
      {R"({"constraints":{"nodes":["GPU 01"]}})", "constraints.nodes[0]", "an id such as"},
      {R"({"constraints":{"nodes":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}})", "constraints.nodes",
       "must name at most 16 nodes"},
      {R"({"constraints":{"form_factor":"nvl"}})", "constraints.form_factor", "unknown value 'nvl'"},
      {R"({"constraints":{"min_gpu_memory_gib":0}})", "constraints.min_gpu_memory_gib", "at least 1"},
      {R"({"constraints":{"rdma":"ib"}})", "constraints.rdma", "expected one of: none, any, infiniband, roce_v2"},
      {R"({"constraints":{"placement":"same_rack"}})", "constraints.placement", "unknown value 'same_rack'"},
      {R"({"workers":3,"constraints":{"placement":"same_node"}})", "constraints.placement",
       "same_node needs 24 GPUs on one node; no node has more than 16"},
      {R"({"priority_class":"urgent"})", "priority_class", "unknown value 'urgent'"},
      {R"({"priority_class":"critical","billing":{"mode":"spot"}})", "billing.mode",
       "a critical job must use on_demand or reserved"},
      {R"({"billing":{"mode":"reserved"}})", "billing.max_price_per_gpu_hour", "does not apply to reserved mode"},
      {R"({"billing":{"mode":"prepaid"}})", "billing.mode", "unknown value 'prepaid'"},
      {R"({"billing":{"max_price_per_gpu_hour":2.75}})", "billing.max_price_per_gpu_hour", "floating-point"},
      {R"({"billing":{"max_price_per_gpu_hour":"0"}})", "billing.max_price_per_gpu_hour", "must be greater than 0"},
      {R"({"billing":{"max_price_per_gpu_hour":"-1"}})", "billing.max_price_per_gpu_hour", "must not be negative"},
      {R"({"image":"NVCR.io/Pytorch"})", "image", "container image reference"},
      {R"({"image":"pytorch:"})", "image", "container image reference"},
      {R"({"image":null,"command":null})", "command", "is required when no image is given"},
      {R"({"image":null,"command":[]})", "command", "is required when no image is given"},
      {R"({"command":"python train.py"})", "command", "must be a list of strings"},
      {R"({"command":["","train.py"]})", "command[0]", "it is the program to run"},
      {R"({"command":["python",3]})", "command[1]", "must be a string"},
      {R"({"env":{"1BAD":"x"}})", "env.1BAD", "not a valid variable name"},
      {R"({"env":{"CUDA_VISIBLE_DEVICES":"0"}})", "env.CUDA_VISIBLE_DEVICES", "set by the platform"},
      {R"({"env":{"NVIDIA_VISIBLE_DEVICES":"all"}})", "env.NVIDIA_VISIBLE_DEVICES", "set by the platform"},
      {R"({"env":{"GPURENT_TOKEN":"x"}})", "env.GPURENT_TOKEN", "reserved"},
      {R"({"env":{"PORT":8080}})", "env.PORT", "quote numbers"},
      {R"({"env":["A=1"]})", "env", "must be a JSON object"},
      {R"({"expected_duration_seconds":0})", "expected_duration_seconds", "at least 1"},
      {R"({"expected_duration_seconds":2678401})", "expected_duration_seconds", "at most 2678400"},
      {R"({"time_limit_seconds":0})", "time_limit_seconds", "at least 1"},
      {R"({"time_limit_seconds":2678401})", "time_limit_seconds", "at most 2678400"},
      {R"({"fault_retries":-1})", "fault_retries", "at least 0"},
      {R"({"fault_retries":11})", "fault_retries", "at most 10"},
      {R"({"workdir":"data/runs"})", "workdir", "an absolute path"},
      {R"({"workdir":"/data/\nruns"})", "workdir", "control characters"},
      {R"({"workdir":"/data/../etc"})", "workdir", "must not contain '..'"},
      {R"({"workdir":"/data/runs/.."})", "workdir", "must not contain '..'"},
      {R"({"labels":{"bad key":"x"}})", "labels.bad key", "not a valid label key"},
      {R"({"gpus":8})", "gpus", "unknown field"},
      {R"({"replicas":null,"status":{"state":"running"},"tenant_id":"x"})", "", ""},  // ignored: parses
  };
  for (const auto& c : cases) {
    json body = valid_training();
    body.merge_patch(json::parse(c.patch));
    auto r = parse_job(body, Currency::kUSD);
    if (std::string(c.field).empty() && std::string(c.reason).empty()) {
      EXPECT_TRUE(r.ok()) << c.patch << ": " << r.error().message;
      continue;
    }
    EXPECT_TRUE(fails_only_on(r, c.field, c.reason)) << c.patch;
  }
}

TEST(Job, InferenceRules) {
  struct Case {
    const char* patch;  // on valid_inference()
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"replicas":null})", "replicas", "is required for inference jobs"},
      {R"({"replicas":{"min":5,"max":4}})", "replicas.min", "must not exceed replicas.max (5 > 4)"},
      {R"({"replicas":{"min":0,"max":4}})", "replicas.min", "must be at least 1"},
      {R"({"replicas":{"min":1,"max":1001}})", "replicas.max", "must be at most 1000"},
      {R"({"replicas":{"min":null}})", "replicas.min", "is required"},
      {R"({"workers":2})", "workers", "must be 1 when gpu_milli is set"},
      {R"({"gpu_milli":0})", "gpu_milli", "must be at least 1"},
      {R"({"gpu_milli":null})", "gpus_per_worker", "is required"},
      {R"({"priority_class":"critical","billing":{"mode":"spot"}})", "billing.mode", "spot"},
      {R"({"replicas":[1,4]})", "replicas", "must be a JSON object"},
      {R"({"gpu_milli":null,"gpus_per_worker":1,"workers":8,"replicas":{"min":1,"max":600}})", "replicas.max",
       "8 workers × 600 replicas is more than the 4096 containers a job may run"},
  };
  for (const auto& c : cases) {
    json body = valid_inference();
    body.merge_patch(json::parse(c.patch));
    EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), c.field, c.reason)) << c.patch;
  }
  json debug = valid_inference();
  debug["kind"] = "debug";
  debug.erase("replicas");
  auto d = parse_job(debug, Currency::kUSD);
  ASSERT_TRUE(d.ok()) << d.error().message;  // a fractional GPU is fine for debug too
  EXPECT_EQ(d->priority_class, PriorityClass::kLow);
}

TEST(Job, CpuOnlyRules) {
  const json base = json::parse(R"({"name":"etl","project":"vision","kind":"batch","gpus_per_worker":0,
                                    "resources":{"cpu_cores":16,"memory_gib":64},"image":"python:3.12"})");
  struct Case {
    const char* patch;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"constraints":{"gpu_models":["a10-24gb"]}})", "constraints.gpu_models", "CPU-only job"},
      {R"({"constraints":{"form_factor":"pcie"}})", "constraints.form_factor", "CPU-only job"},
      {R"({"constraints":{"min_gpu_memory_gib":16}})", "constraints.min_gpu_memory_gib", "CPU-only job"},
      {R"({"constraints":{"placement":"same_nvlink_domain"}})", "constraints.placement", "CPU-only job"},
      {R"({"resources":null})", "resources", "no GPUs to size the worker's share by"},
      {R"({"resources":{"cpu_cores":null}})", "resources.cpu_cores", "is required for a CPU-only job"},
      {R"({"resources":{"memory_gib":null}})", "resources.memory_gib", "is required for a CPU-only job"},
  };
  for (const auto& c : cases) {
    json body = base;
    body.merge_patch(json::parse(c.patch));
    EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), c.field, c.reason)) << c.patch;
  }
  json same_node = base;
  same_node["workers"] = 4;
  same_node["constraints"] = {{"placement", "same_node"}};
  EXPECT_TRUE(parse_job(same_node, Currency::kUSD).ok());
}

TEST(Job, BoundsEnvAndCommand) {
  json body = valid_training();
  body["env"] = json::object();
  for (size_t i = 0; i < kMaxEnvVars + 1; ++i) body["env"]["V" + std::to_string(i)] = "x";
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "env", "at most 128 variables (got 129)"));

  const std::string huge(200000, 'A');  // must be refused before any regex sees it
  body["env"] = {{huge, "x"}};
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "env." + huge, "not a valid variable name"));

  body["env"] = {{"A", std::string(40000, 'x')}, {"B", std::string(40000, 'y')}};
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "env", "must total at most 65536 bytes"));

  body = valid_training();
  body["command"] = json::array();
  for (size_t i = 0; i < kMaxCommandArgs + 1; ++i) body["command"].push_back("a");
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "command", "at most 256 arguments"));

  body["command"] = {"python", std::string(40000, 'x'), std::string(40000, 'y')};
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "command", "must total at most 65536 bytes"));

  body = valid_training();
  body["command"] = {"python", "-c", ""};  // empty arguments are legitimate
  body["env"] = {{"EMPTY", ""}};
  auto j = parse_job(body, Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  expect_round_trip(*j);

  body = valid_training();
  body["constraints"]["gpu_models"] = json::array();
  for (int i = 0; i < 17; ++i) body["constraints"]["gpu_models"].push_back("m" + std::to_string(i));
  EXPECT_TRUE(fails_only_on(parse_job(body, Currency::kUSD), "constraints.gpu_models", "at most 16 models"));
}

TEST(Job, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json body = valid_training();
  body["env"] = {{"CUDA_VISIBLE_DEVICES", "0"}};
  FieldError e = testing_util::only_field_error(parse_job(body, Currency::kUSD));
  EXPECT_EQ(e.coded.code, "job.env.platform_set");
  EXPECT_EQ(e.reason, "is set by the platform: it decides which GPUs the worker sees");
  EXPECT_EQ(render(e.coded, "zh"), "由平台设置：平台决定工作进程能看到哪些 GPU");

  body = valid_inference();
  body.erase("replicas");
  auto r = parse_job(body, Currency::kUSD);
  e = testing_util::only_field_error(r);
  EXPECT_EQ(e.coded.code, "job.replicas.required");
  EXPECT_EQ(e.reason, "is required for inference jobs ({min, max} serving replicas)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(render(r.error().detail, "zh"), "replicas：推理作业必须填写（服务副本数 {min, max}）");

  body = valid_training();
  body["workdir"] = "data/runs";
  e = testing_util::only_field_error(parse_job(body, Currency::kUSD));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.workdir");
  EXPECT_NE(render(e.coded, "zh").find("节点上的绝对路径"), std::string::npos) << render(e.coded, "zh");
}

TEST(Job, AcceptsImageReferenceForms) {
  for (const char* image : {"ubuntu", "ubuntu:22.04", "localhost:5000/team/train:v1.2-rc_3",
                            "registry.example.com/a/b/c", "nvcr.io/nvidia/pytorch:24.05-py3",
                            "ghcr.io/acme/model@sha256:"
                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}) {
    json body = valid_training();
    body["image"] = image;
    EXPECT_TRUE(parse_job(body, Currency::kUSD).ok()) << image;
  }
}

TEST(Job, ReportsManyErrorsAtOnce) {
  auto r = parse_job(json::parse(R"({"name":"X","kind":"train","workers":0,"gpus_per_worker":99,"image":"u","typo":1})"),
                     Currency::kUSD);
  ASSERT_FALSE(r.ok());
  std::set<std::string> fields;
  for (const auto& e : r.error().fields) fields.insert(e.field);
  EXPECT_EQ(fields, (std::set<std::string>{"name", "project", "kind", "workers", "gpus_per_worker", "typo"}));
  EXPECT_TRUE(fails_only_on(parse_job(json("job"), Currency::kUSD), "", "must be a JSON object"));
}

TEST(JobStatus, RejectsMalformedStatus) {
  struct Case {
    const char* body;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({})", "status.state", "is required"},
      {R"({"state":"done"})", "status.state", "unknown value 'done'"},
      {R"({"state":"running","updated_at":"yesterday"})", "status.updated_at", "RFC 3339"},
      {R"({"state":"running","placement":[{"replica":0,"worker":0,"gpus":[0]}]})", "status.placement[0].node",
       "is required"},
      {R"({"state":"running","placement":[{"replica":0,"worker":0,"node":"n1","gpus":[3,1]}]})",
       "status.placement[0].gpus[1]", "greater than the index before it"},
      {R"({"state":"running","placement":[{"replica":0,"worker":0,"node":"n1","gpus":[16]}]})",
       "status.placement[0].gpus[0]", "0..15"},
      {R"({"state":"running","placement":[{"replica":0,"worker":0,"node":"n1","gpus":[0,1],"gpu_milli":250}]})",
       "status.placement[0].gpu_milli", "exactly one GPU"},
      {R"({"state":"running","placement":[{"replica":0,"worker":1024,"node":"n1","gpus":[0]}]})",
       "status.placement[0].worker", "at most 1023"},
      {R"({"state":"running","placement":{}})", "status.placement", "must be a list"},
      {R"({"state":"running","phase":"x"})", "status.phase", "unknown field"},
      {R"({"state":"pending","reason_message":{"args":{}}})", "status.reason_message", "must be a string"},
      {R"({"state":"pending","reason_message":{"code":"text","args":[]}})", "status.reason_message", "must be an object"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(fails_only_on(parse_job_status(json::parse(c.body), "status"), c.field, c.reason)) << c.body;
  FieldError e = testing_util::only_field_error(parse_job_status(
      json::parse(R"({"state":"running","placement":[{"replica":0,"worker":0,"node":"n1","gpus":[16]}]})"), "status"));
  EXPECT_EQ(e.coded.code, "job.placement.gpu_index");
  EXPECT_EQ(render(e.coded, "zh"), "必须是 0..15 的 GPU 索引");

  JobStatus s{JobState::kRunning, {}, 0, {{2, 0, "nod_00000000000000a1", {3}, 250}}};
  json doc = to_json(s);
  EXPECT_FALSE(doc.contains("reason"));
  EXPECT_FALSE(doc.contains("updated_at"));
  EXPECT_EQ(doc["placement"][0]["gpu_milli"], 250);
  EXPECT_EQ(*parse_job_status(doc, "status"), s);

  // A reason is stored as its code with arguments and its English text; a document from before
  // codes (text only) reads back as that text.
  s.reason = Message("sched.requeued").arg("why", Message("sched.node_failed").arg("node", "n1"));
  doc = to_json(s);
  EXPECT_EQ(doc["reason"], "requeued: node n1 failed");
  EXPECT_EQ(doc["reason_message"]["args"]["why"]["code"], "sched.node_failed");
  EXPECT_EQ(*parse_job_status(doc, "status"), s);
  doc.erase("reason_message");
  EXPECT_EQ(parse_job_status(doc, "status")->reason, verbatim("requeued: node n1 failed"));
}

TEST(Job, ExampleFilesParse) {
  auto training = load_example("job.yaml");
  ASSERT_TRUE(training.ok()) << training.error().message;
  auto t = parse_job(*training, Currency::kUSD);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->kind, JobKind::kTraining);
  EXPECT_EQ(t->workers, 4);
  EXPECT_EQ(t->gpus_per_worker, 8);
  EXPECT_EQ(t->billing.max_price_per_gpu_hour, Money(3'200'000, Currency::kUSD));
  EXPECT_EQ(t->env.at("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(t->labels.at("gpurent.io/experiment"), "sft-v3");
  expect_round_trip(*t);

  auto inference = load_example("job-inference.yaml");
  ASSERT_TRUE(inference.ok()) << inference.error().message;
  auto i = parse_job(*inference, Currency::kUSD);
  ASSERT_TRUE(i.ok()) << i.error().message;
  EXPECT_EQ(i->kind, JobKind::kInference);
  EXPECT_EQ(i->gpu_milli, 250);
  EXPECT_EQ(i->replicas, (Replicas{2, 8}));
  EXPECT_EQ(i->priority_class, PriorityClass::kHigh);
  EXPECT_EQ(i->billing.mode, BillingMode::kSpot);
  expect_round_trip(*i);

  // The examples name real catalog models, so they also pass the server's catalog check.
  auto catalog = testutil::catalog_file(GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  for (const Job* j : {&*t, &*i})
    for (const auto& m : j->constraints.gpu_models) EXPECT_NE(catalog->find(m), nullptr) << m;
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

// Volumes: a slug name, a plain absolute mount outside /proc, /sys and /dev, each once.
TEST(Job, VolumesAreCheckedAndRoundTrip) {
  json doc = valid_training();
  doc["volumes"] = {{{"name", "data"}, {"mount", "/data"}}, {{"name", "ref"}, {"mount", "/mnt/ref"}, {"read_only", true}}};
  doc["resources"]["shm_gib"] = 16;
  auto j = parse_job(doc, Currency::kCNY);
  ASSERT_TRUE(j.ok()) << j.error().message;
  ASSERT_EQ(j->volumes.size(), 2u);
  EXPECT_TRUE(j->volumes[1].read_only);
  EXPECT_EQ(*j->resources.shm_gib, 16);
  expect_round_trip(*j);
  const std::pair<json, std::string> bad[] = {
      {json{{{"name", "data"}, {"mount", "/proc/x"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "/.gpurent/run"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "//proc"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "/./sys"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "/data/"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "/a/../dev"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "/"}}}, "volumes[0].mount"},
      {json{{{"name", "data"}, {"mount", "relative"}}}, "volumes[0].mount"},
      {json{{{"name", "Data!"}, {"mount", "/d"}}}, "volumes[0].name"},
      {json{{{"name", "a"}, {"mount", "/d"}}, {{"name", "a"}, {"mount", "/e"}}}, "volumes[1].name"},
      {json{{{"name", "a"}, {"mount", "/d"}}, {{"name", "b"}, {"mount", "/d"}}}, "volumes[1].mount"},
      {json{{{"name", "a"}, {"mount", "/d"}, {"extra", 1}}}, "volumes[0].extra"},
  };
  for (const auto& [vols, field] : bad) {
    json d = valid_training();
    d["volumes"] = vols;
    auto r = parse_job(d, Currency::kCNY);
    ASSERT_FALSE(r.ok()) << vols.dump();
    EXPECT_NE(r.error().message.find(field), std::string::npos) << vols.dump() << ": " << r.error().message;
  }
}

// Readiness: a health check command or the workload's heartbeat, exactly one, with an interval.
TEST(Job, ReadinessIsCheckedAndRoundTrips) {
  json doc = valid_inference();
  doc["readiness"] = {{"command", {"curl", "-sf", "http://127.0.0.1:8000/health"}}, {"interval_seconds", 2}};
  auto j = parse_job(doc, Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  ASSERT_TRUE(j->readiness.has_value());
  EXPECT_EQ(j->readiness->command.size(), 3u);
  EXPECT_FALSE(j->readiness->heartbeat);
  EXPECT_EQ(j->readiness->interval_seconds, 2);
  expect_round_trip(*j);
  doc["readiness"] = {{"heartbeat", true}};
  j = parse_job(doc, Currency::kUSD);
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_TRUE(j->readiness->heartbeat);
  EXPECT_EQ(j->readiness->interval_seconds, 5);  // the default
  expect_round_trip(*j);
  EXPECT_FALSE(parse_job(valid_inference(), Currency::kUSD)->readiness.has_value());
  const std::pair<json, std::string> bad[] = {
      {json::object(), "readiness.command"},
      {{{"heartbeat", false}}, "readiness.command"},
      {{{"heartbeat", true}, {"command", {"true"}}}, "readiness.heartbeat"},
      {{{"command", json::array()}}, "readiness.command"},
      {{{"command", "curl localhost"}}, "readiness.command"},
      {{{"command", {""}}}, "readiness.command[0]"},
      {{{"command", {"true"}}, {"interval_seconds", 0}}, "readiness.interval_seconds"},
      {{{"command", {"true"}}, {"interval_seconds", 301}}, "readiness.interval_seconds"},
      {{{"command", {"true"}}, {"every", 3}}, "readiness.every"},
      {json("yes"), "readiness"},
  };
  for (const auto& [rd, field] : bad) {
    json d = valid_inference();
    d["readiness"] = rd;
    auto r = parse_job(d, Currency::kUSD);
    ASSERT_FALSE(r.ok()) << rd.dump();
    EXPECT_NE(r.error().message.find(field), std::string::npos) << rd.dump() << ": " << r.error().message;
  }
}

// Secrets: each {name, env} or {name, file}, variables and files once each, not reserved.
TEST(Job, SecretsAreCheckedAndRoundTrip) {
  json doc = valid_training();
  doc["secrets"] = {{{"name", "hf-token"}, {"env", "HF_TOKEN"}}, {{"name", "hf-token"}, {"file", "/run/secrets/hf"}}};
  auto j = parse_job(doc, Currency::kCNY);
  ASSERT_TRUE(j.ok()) << j.error().message;
  ASSERT_EQ(j->secrets.size(), 2u);
  EXPECT_EQ(j->secrets[0].env, "HF_TOKEN");
  EXPECT_EQ(j->secrets[1].file, "/run/secrets/hf");
  expect_round_trip(*j);
  const std::pair<json, std::string> bad[] = {
      {json{{{"name", "a"}}}, "secrets[0].env"},
      {json{{{"name", "a"}, {"env", "X"}, {"file", "/x"}}}, "secrets[0].file"},
      {json{{{"name", "a"}, {"env", "1X"}}}, "secrets[0].env"},
      {json{{{"name", "a"}, {"env", "GPURENT_TOKEN"}}}, "secrets[0].env"},
      {json{{{"name", "a"}, {"env", "CUDA_VISIBLE_DEVICES"}}}, "secrets[0].env"},
      {json{{{"name", "a"}, {"env", "NCCL_DEBUG"}}}, "secrets[0].env"},  // also in the job's env
      {json{{{"name", "a"}, {"env", "X"}}, {{"name", "b"}, {"env", "X"}}}, "secrets[1].env"},
      {json{{{"name", "a"}, {"file", "/proc/self"}}}, "secrets[0].file"},
      {json{{{"name", "a"}, {"file", "/run/a:b"}}}, "secrets[0].file"},
      {json{{{"name", "a"}, {"file", "/x"}}, {{"name", "b"}, {"file", "/x"}}}, "secrets[1].file"},
      {json{{{"name", "A b"}, {"env", "X"}}}, "secrets[0].name"},
  };
  json in_volume = valid_training();
  in_volume["volumes"] = {{{"name", "data"}, {"mount", "/data"}}};
  in_volume["secrets"] = {{{"name", "a"}, {"file", "/data/key"}}};
  auto iv = parse_job(in_volume, Currency::kCNY);
  ASSERT_FALSE(iv.ok());
  EXPECT_NE(iv.error().message.find("secrets[0].file"), std::string::npos) << iv.error().message;
  for (const auto& [secs, field] : bad) {
    json d = valid_training();
    d["secrets"] = secs;
    auto r = parse_job(d, Currency::kCNY);
    ASSERT_FALSE(r.ok()) << secs.dump();
    EXPECT_NE(r.error().message.find(field), std::string::npos) << secs.dump() << ": " << r.error().message;
  }
}

}  // namespace
}  // namespace gpurent
