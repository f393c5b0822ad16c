// Node volumes' pure helpers (services/node_volumes.h): where a node keeps one, the copy command
// as the node runs it (values quoted), and what a move would copy and take.
#include "server/services/node_volumes.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TEST(NodeVolumes, FolderPerNodeAndACopyCommandWithQuotedValues) {
  EXPECT_EQ(node_volume_dir("/var/lib/gpurent/volumes", "gpn2", "ten_1", "home"), "/var/lib/gpurent/volumes/ten_1/home");
  EXPECT_EQ(node_volume_dir("/tmp/t/%n/volumes", "gpn2", "ten_1", "home"), "/tmp/t/gpn2/volumes/ten_1/home")
      << "%n: one machine's fake nodes each keep their own";
  EXPECT_EQ(render_volume_copy("rsync -a --delete {from_node}:{from_dir}/ {dir}/", "gpn1", "/v/ten_1/home", "/w/ten_1/home"),
            "rsync -a --delete 'gpn1':'/v/ten_1/home'/ '/w/ten_1/home'/");
  EXPECT_EQ(render_volume_copy("cp -a {from_dir}/. {dir}", "n", "/it's", "/d"), "cp -a '/it'\\''s'/. '/d'")
      << "a quote in a value stays data";
}

TEST(NodeVolumes, ACopyIsEstimatedFromWhatWasMeasured) {
  Volume v;
  v.size_gb = 50;
  // Nothing measured: the provisioned size at the assumed rate. 50 GB at 1000 Mbit/s: 400 s.
  CopyEstimate e = estimate_volume_copy(v, 1000);
  EXPECT_FALSE(e.measured);
  EXPECT_EQ(e.bytes, 50'000'000'000);
  EXPECT_EQ(e.rate_basis, "assumed");
  EXPECT_EQ(e.rate_mbps, 1000);
  EXPECT_EQ(e.seconds, 400);
  // Its size measured: 1 byte still takes a second (rounded up).
  v.used_bytes = 1;
  e = estimate_volume_copy(v, 1000);
  EXPECT_TRUE(e.measured);
  EXPECT_EQ(e.seconds, 1);
  // A copy too small to tell a rate keeps the assumed one; a real one gives its own.
  v.used_bytes = 2'000'000'000;
  v.last_copy = VolumeCopy{"n1", "n2", 1'000'000, 2, 0};
  EXPECT_EQ(estimate_volume_copy(v, 1000).rate_basis, "assumed");
  v.last_copy = VolumeCopy{"n1", "n2", 500'000'000, 2'000, 0};  // 250 MB/s = 2000 Mbit/s
  e = estimate_volume_copy(v, 1000);
  EXPECT_EQ(e.rate_basis, "measured");
  EXPECT_EQ(e.rate_mbps, 2000);
  EXPECT_EQ(e.seconds, 8);  // 2 GB at 250 MB/s
}

TEST(NodeVolumes, ARunIsReadyWhenItsNodeVolumesAreOnItsNode) {
  Volume shared, fresh, home, scratch;
  fresh.placement = home.placement = scratch.placement = VolumePlacement::kNode;
  shared.node_id = "n1";  // a shared volume's node means nothing
  home.node_id = scratch.node_id = "n2";
  home.size_gb = 10;  // nothing measured: 10 GB at the assumed 1000 Mbit/s is 80 s
  auto ready = [](const std::vector<Volume>& v, const std::string& node, TimeMs started, TimeMs now) {
    return node_volumes_ready_at(v, node, "job_b", started, now, 1000);
  };
  // Nothing to copy: ready from the start (a volume on no node yet is made by the run).
  EXPECT_EQ(ready({shared, fresh, home}, "n2", 1'000, 5'000), 1'000);
  EXPECT_EQ(ready({}, "n2", 1'000, 5'000), 1'000);
  // Still on another node: its copy is going on, or not reported yet — for three times the
  // estimate and a quarter of an hour (3 × 80 s + 15 min after the start), then ready from then.
  const TimeMs given_up = 1'000 + 3 * 80'000 + kCopyReportGraceMs;
  EXPECT_EQ(ready({shared, home}, "n3", 1'000, 5'000), std::nullopt);
  EXPECT_EQ(ready({shared, home}, "n3", 1'000, given_up - 1), std::nullopt);
  EXPECT_EQ(ready({shared, home}, "n3", 1'000, given_up), given_up);
  // Copied here by this run: ready when its copies' time (as the nodes timed them) has passed
  // since the run began — the node's clock (`at`) is not the server's, and is not read.
  home.last_copy = VolumeCopy{"n1", "n2", 9'000'000'000, 60'000, 9'999'999'999, "job_b"};
  scratch.last_copy = VolumeCopy{"n1", "n2", 1'000'000, 1'000, 0, "job_b"};
  EXPECT_EQ(ready({home, scratch}, "n2", 1'000, 70'000), 61'000);
  // A copy here by an earlier run (this run copied nothing), or one that went elsewhere: from the start.
  home.last_copy->job_id = "job_a";
  EXPECT_EQ(ready({home}, "n2", 90'000, 95'000), 90'000);
  home.last_copy = VolumeCopy{"n2", "n4", 1, 1, 500'000, "job_b"};
  EXPECT_EQ(ready({home}, "n2", 1'000, 5'000), 1'000);
}

}  // namespace
}  // namespace gpurent
