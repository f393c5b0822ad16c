// When a stopped instance is released (services/instance_release.h), on a real SQLite store: the
// days count from its last run's end, found through its jobs' chains of runs, or from its latest
// start's end when that start was stopped before it ever ran.
#include "server/services/instance_release.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"
#include "server/services/services_test_util.h"

namespace gpurent {
namespace {

constexpr TimeMs kDay = 86'400'000;

class InstanceRelease : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    Record offer;
    offer.kind = "offers";
    offer.id = "off_1";
    offer.name = "h100";
    offer.body = {{"name", "h100"},
                  {"supplier", "dc"},
                  {"gpu_model", "sxm-test-80gb"},
                  {"region", "cn-east"},
                  {"currency", "USD"},
                  {"prices", {{"on_demand", "3.00"}}},
                  {"fees", {{"billing_starts", "ready"}}},
                  {"stopped_instance_release_days", 5}};
    put(offer);
  }
  // Job `id` of the instance, ended at `ended` (its status says so at `seen`, when later); with a
  // run from `ran` to `ended` when set.
  void job(const std::string& id, TimeMs ended, std::optional<TimeMs> ran, std::optional<TimeMs> seen = std::nullopt) {
    Record j;
    j.kind = "jobs";
    j.id = j.name = id;
    j.tenant_id = "ten_1";
    j.project_id = "prj_1";
    j.state = "cancelled";
    j.body = {{"status", {{"state", "cancelled"}, {"updated_at", format_rfc3339(seen.value_or(ended))}}}};
    put(j);
    Record last;
    last.kind = "last-runs";
    last.id = last.name = "runs-of-" + id;
    last.tenant_id = "ten_1";
    last.body = {{"run", ran ? "alc_" + id : ""}};
    put(last);
    if (!ran) return;
    JobRun run;
    run.job_id = id;
    run.project_id = "prj_1";
    run.tenant_id = "ten_1";
    run.offer_id = "off_1";
    run.state = RunState::kClosed;
    run.running_at = *ran;
    run.ended_at = ended;
    run.previous_run = "";
    put(run_record("alc_" + id, run));
  }
  std::optional<ReleaseDue> due(std::vector<std::string> jobs) {
    Instance i;
    i.name = "box";
    i.tenant_id = "ten_1";
    i.project_id = "prj_1";
    i.job_ids = std::move(jobs);
    auto d = release_due(*store_, testing_util::test_catalog(), i);
    EXPECT_TRUE(d.ok()) << d.error().message;
    return d.ok() ? *d : std::nullopt;
  }
};

TEST_F(InstanceRelease, DaysCountFromTheLastRunOrALaterStartStoppedBeforeItRan) {
  job("job_a", 10 * kDay, 9 * kDay);
  auto d = due({"job_a"});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->stopped_at, 10 * kDay);
  EXPECT_EQ(d->release_at, 15 * kDay);
  EXPECT_EQ(d->offer, "h100");
  // Started again on day 14, still waiting for capacity when stopped on day 14.5: that was use
  // too, and the five days count from then (not a release at once, with no warning).
  job("job_b", 14 * kDay + kDay / 2, std::nullopt);
  d = due({"job_a", "job_b"});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->stopped_at, 14 * kDay + kDay / 2);
  EXPECT_EQ(d->release_at, 19 * kDay + kDay / 2);
  // Never ran at all: nothing to release by an offer's rule.
  EXPECT_FALSE(due({"job_b"}).has_value());
  // A start that ran counts from its run's end, even when its job's end was recorded later (the
  // executor saw it at a later tick).
  job("job_c", 20 * kDay, 19 * kDay, 20 * kDay + kDay / 4);
  d = due({"job_a", "job_b", "job_c"});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->stopped_at, 20 * kDay);
}

}  // namespace
}  // namespace gpurent
