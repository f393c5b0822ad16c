#include "model/job_state.h"

#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "core/message.h"

namespace gpurent {
namespace {

using S = JobState;

// The legal moves, written out independently of the implementation's switch.
const std::set<std::pair<S, S>> kLegal = {
    {S::kPending, S::kAdmitted},    {S::kPending, S::kCancelled},   {S::kAdmitted, S::kRunning},
    {S::kAdmitted, S::kPending},    {S::kAdmitted, S::kCancelled},  {S::kAdmitted, S::kFailed},
    {S::kRunning, S::kSucceeded},
    {S::kRunning, S::kFailed},      {S::kRunning, S::kPreempted},   {S::kRunning, S::kCancelled},
    {S::kPreempted, S::kPending},   {S::kPreempted, S::kCancelled},
};

TEST(JobState, WireNamesRoundTrip) {
  std::set<std::string> names;
  for (S s : kAllJobStates) {
    std::string n = job_state_name(s);
    names.insert(n);
    ASSERT_EQ(parse_job_state(n), s) << n;
  }
  EXPECT_EQ(names, (std::set<std::string>{"pending", "admitted", "running", "succeeded", "failed", "preempted",
                                          "cancelled"}));
  EXPECT_EQ(parse_job_state("Running"), std::nullopt);
  EXPECT_EQ(parse_job_state(""), std::nullopt);
  EXPECT_EQ(parse_job_state("canceled"), std::nullopt);
}

TEST(JobState, TerminalAndHoldingStates) {
  for (S s : kAllJobStates) {
    bool terminal = s == S::kSucceeded || s == S::kFailed || s == S::kCancelled;
    EXPECT_EQ(is_terminal(s), terminal) << job_state_name(s);
    EXPECT_EQ(holds_resources(s), s == S::kAdmitted || s == S::kRunning) << job_state_name(s);
  }
}

TEST(JobState, WholeTransitionMatrix) {
  int legal = 0;
  for (S from : kAllJobStates) {
    for (S to : kAllJobStates) {
      Status st = check_transition(from, to);
      std::string label = std::string(job_state_name(from)) + " -> " + job_state_name(to);
      if (kLegal.count({from, to})) {
        EXPECT_TRUE(st.ok()) << label;
        ++legal;
        continue;
      }
      ASSERT_FALSE(st.ok()) << label;
      EXPECT_EQ(st.error().code, Code::kConflict) << label;
      std::string want = from == to ? std::string("job is already ") + job_state_name(from)
                                    : std::string("job is ") + job_state_name(from) + "; cannot move to " +
                                          job_state_name(to);
      EXPECT_EQ(st.error().message, want) << label;
    }
  }
  EXPECT_EQ(legal, static_cast<int>(kLegal.size()));
}

TEST(JobState, NothingLeavesATerminalState) {
  for (S from : kAllJobStates) {
    if (!is_terminal(from)) continue;
    for (S to : kAllJobStates) EXPECT_FALSE(check_transition(from, to).ok());
  }
  EXPECT_EQ(check_transition(S::kSucceeded, S::kRunning).error().message,
            "job is succeeded; cannot move to running");
  const Error e = check_transition(S::kSucceeded, S::kRunning).error();
  EXPECT_EQ(e.detail.code, "job.state.cannot_move");
  EXPECT_EQ(render(e.detail, "zh"), "作业处于 succeeded 状态，不能转为 running");
  EXPECT_EQ(check_transition(S::kFailed, S::kFailed).error().detail.code, "job.state.already");
}

TEST(JobState, CancelIsPossibleFromEveryLiveState) {
  for (S s : kAllJobStates)
    EXPECT_EQ(check_transition(s, S::kCancelled).ok(), !is_terminal(s)) << job_state_name(s);
}

}  // namespace
}  // namespace gpurent
