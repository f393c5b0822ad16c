// The Store contract, run against every backend (store_backends_test_util.h): CRUD, versions,
// names unique per scope, filters and keyset pagination, rollback of a failed write, tokens, job
// events, the audit log, bodies kept as the same JSON, and reopening.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <stdexcept>

#include "store/store.h"
#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

class StoreTest : public StoreBackendTest {};

TEST_P(StoreTest, InsertGetUpdateRemove) {
  Record r = make_record("suppliers", "sup_0000000000000001", "acme");
  r.region = "eu-west";
  r.version = 42;  // ignored: insert starts at 1
  r.body["nested"] = {{"gpus", {1, 2, 3}}, {"price", "3.20"}};
  ASSERT_TRUE(insert(r).ok());

  auto got = store_->get("suppliers", r.id);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->name, "acme");
  EXPECT_EQ(got->region, "eu-west");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->created_at, r.created_at);
  EXPECT_EQ(got->body, r.body);

  Record changed = *got;
  changed.state = "active";
  changed.updated_at = r.created_at + 5000;
  changed.body["nested"]["price"] = "4.00";
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.update(changed); }).ok());
  got = store_->get("suppliers", r.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->state, "active");
  EXPECT_EQ(got->updated_at, r.created_at + 5000);
  EXPECT_EQ(got->created_at, r.created_at);
  EXPECT_EQ(got->body["nested"]["price"], "4.00");

  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.remove("suppliers", r.id); }).ok());
  auto gone = store_->get("suppliers", r.id);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Code::kNotFound);
  EXPECT_EQ(gone.error().message, "suppliers/sup_0000000000000001 not found");

  auto again = store_->write([&](StoreTx& tx) { return tx.remove("suppliers", r.id); });
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Code::kNotFound);
}

TEST_P(StoreTest, SameIdInAnotherKindIsAnotherObject) {
  ASSERT_TRUE(insert(make_record("nodes", "x_1", "a")).ok());
  ASSERT_TRUE(insert(make_record("offers", "x_1", "a")).ok());
  auto dup = insert(make_record("nodes", "x_1", "b"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Code::kConflict);
  ASSERT_EQ(dup.error().fields.size(), 1u);
  EXPECT_EQ(dup.error().fields[0].field, "id");
}

TEST_P(StoreTest, StaleVersionIsAConflictAndMissingIsNotFound) {
  Record r = make_record("projects", "prj_1", "vision", "ten_a");
  ASSERT_TRUE(insert(r).ok());
  r.version = 1;
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.update(r); }).ok());
  // A second writer that read version 1 loses.
  auto stale = store_->write([&](StoreTx& tx) { return tx.update(r); });
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, Code::kConflict);
  ASSERT_EQ(stale.error().fields.size(), 1u);
  EXPECT_EQ(stale.error().fields[0].field, "version");
  EXPECT_EQ(stale.error().fields[0].reason, "version 1 is stale; current is 2");

  Record missing = make_record("projects", "prj_2", "other", "ten_a");
  missing.version = 1;
  auto nf = store_->write([&](StoreTx& tx) { return tx.update(missing); });
  ASSERT_FALSE(nf.ok());
  EXPECT_EQ(nf.error().code, Code::kNotFound);
  EXPECT_EQ(nf.error().message, "projects/prj_2 not found");
}

TEST_P(StoreTest, NamesAreUniquePerScope) {
  ASSERT_TRUE(insert(make_record("projects", "prj_1", "vision", "ten_a")).ok());
  ASSERT_TRUE(insert(make_record("projects", "prj_2", "vision", "ten_b")).ok());       // other tenant
  ASSERT_TRUE(insert(make_record("nodes", "nod_1", "vision", "", "sup_a")).ok());      // other kind
  ASSERT_TRUE(insert(make_record("nodes", "nod_2", "vision", "", "sup_b")).ok());      // other supplier
  ASSERT_TRUE(insert(make_record("suppliers", "sup_a", "vision")).ok());               // global
  ASSERT_TRUE(insert(make_record("jobs", "job_1", "", "ten_a")).ok());                 // unnamed
  ASSERT_TRUE(insert(make_record("jobs", "job_2", "", "ten_a")).ok());                 // unnamed too

  for (const Record& dup : {make_record("projects", "prj_3", "vision", "ten_a"),
                            make_record("nodes", "nod_3", "vision", "", "sup_a"),
                            make_record("suppliers", "sup_b", "vision")}) {
    auto s = insert(dup);
    ASSERT_FALSE(s.ok()) << dup.id;
    EXPECT_EQ(s.error().code, Code::kConflict);
    ASSERT_EQ(s.error().fields.size(), 1u);
    EXPECT_EQ(s.error().fields[0].field, "name");
    EXPECT_EQ(s.error().fields[0].reason, "'vision' already exists");
  }

  // Renaming onto a taken name conflicts too; the tenant scope wins over the supplier scope.
  auto p2 = store_->get("projects", "prj_2").value();
  p2.tenant_id = "ten_a";
  auto moved = store_->write([&](StoreTx& tx) { return tx.update(p2); });
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().fields.at(0).field, "name");
  // After a delete the name is free again.
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.remove("projects", "prj_1"); }).ok());
  EXPECT_TRUE(store_->write([&](StoreTx& tx) { return tx.update(p2); }).ok());
}

TEST_P(StoreTest, FiltersAndKeysetPagination) {
  std::vector<Record> rows;
  for (int i = 0; i < 250; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "job_%04d", i);
    Record r = make_record("jobs", id, "j" + std::to_string(i), i % 2 == 0 ? "ten_even" : "ten_odd");
    r.state = i % 5 == 0 ? "running" : "queued";
    r.gpu_model = "h100";
    rows.push_back(r);
  }
  rows.push_back(make_record("nodes", "job_9999", "not-a-job"));
  ASSERT_TRUE(insert_all(*store_, rows).ok());

  std::vector<std::string> seen;
  ListQuery q{.kind = "jobs", .limit = 100};
  std::vector<size_t> page_sizes;
  for (;;) {
    auto page = store_->list(q);
    ASSERT_TRUE(page.ok()) << page.error().message;
    page_sizes.push_back(page->items.size());
    for (const auto& r : page->items) seen.push_back(r.id);
    if (page->next_after.empty()) break;
    EXPECT_EQ(page->next_after, page->items.back().id);
    q.after_id = page->next_after;
  }
  EXPECT_EQ(page_sizes, (std::vector<size_t>{100, 100, 50}));
  ASSERT_EQ(seen.size(), 250u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.front(), "job_0000");
  EXPECT_EQ(seen.back(), "job_0249");

  // Exactly one full page: no next page.
  auto exact = store_->list({.kind = "jobs", .after_id = "job_0149", .limit = 100});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->items.size(), 100u);
  EXPECT_EQ(exact->next_after, "");

  auto running_even = store_->list({.kind = "jobs", .eq = {{"state", "running"}, {"tenant_id", "ten_even"}}, .limit = 1000});
  ASSERT_TRUE(running_even.ok());
  EXPECT_EQ(running_even->items.size(), 25u);  // i % 10 == 0
  for (const auto& r : running_even->items) {
    EXPECT_EQ(r.state, "running");
    EXPECT_EQ(r.tenant_id, "ten_even");
  }
  auto by_name = store_->list({.kind = "jobs", .eq = {{"name", "j7"}}});
  ASSERT_TRUE(by_name.ok());
  ASSERT_EQ(by_name->items.size(), 1u);
  EXPECT_EQ(by_name->items[0].id, "job_0007");

  EXPECT_EQ(store_->count("jobs", {}).value(), 250);
  EXPECT_EQ(store_->count("jobs", {{"state", "running"}}).value(), 50);
  EXPECT_EQ(store_->count("jobs", {{"gpu_model", "a100"}}).value(), 0);
  EXPECT_EQ(store_->count("nodes", {}).value(), 1);

  // Ids alone, unpaged, in id order, with the same filters (inside a write, as the scheduler reads).
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
                auto all = tx.list_ids("jobs", {});
                EXPECT_TRUE(all.ok());
                EXPECT_EQ(all->size(), 250u);
                EXPECT_TRUE(std::is_sorted(all->begin(), all->end()));
                auto running = tx.list_ids("jobs", {{"state", "running"}, {"tenant_id", "ten_even"}});
                EXPECT_TRUE(running.ok());
                EXPECT_EQ(running->size(), 25u);
                EXPECT_EQ(running->front(), "job_0000");
                EXPECT_EQ(running->back(), "job_0240");
                EXPECT_TRUE(tx.list_ids("jobs", {{"state", "done"}})->empty());
                auto bad = tx.list_ids("jobs", {{"body", "x"}});
                EXPECT_FALSE(bad.ok());
                EXPECT_EQ(bad.error().fields.at(0).field, "body");
                return ok_status();
              }).ok());
}

// updated_since keeps the records written at or after a time, with the other filters and across
// pages; a record written again later is in it.
TEST_P(StoreTest, ListsWhatWasWrittenSinceATime) {
  const TimeMs t0 = 1'700'000'000'000;
  std::vector<Record> rows;
  for (int i = 0; i < 30; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "job_%04d", i);
    Record r = make_record("jobs", id, "j" + std::to_string(i), "ten_1");
    r.state = i % 2 == 0 ? "running" : "succeeded";
    r.updated_at = t0 + i * 1000;
    rows.push_back(r);
  }
  ASSERT_TRUE(insert_all(*store_, rows).ok());
  auto ids = [&](ListQuery q) {
    std::vector<std::string> out;
    for (;;) {
      auto page = store_->list(q);
      EXPECT_TRUE(page.ok()) << page.error().message;
      if (!page.ok()) return out;
      for (const auto& r : page->items) out.push_back(r.id);
      if (page->next_after.empty()) return out;
      q.after_id = page->next_after;
    }
  };
  auto since20 = ids({.kind = "jobs", .limit = 3, .updated_since = t0 + 20'000});
  ASSERT_EQ(since20.size(), 10u);
  EXPECT_EQ(since20.front(), "job_0020");
  EXPECT_EQ(since20.back(), "job_0029");
  EXPECT_EQ(ids({.kind = "jobs", .eq = {{"state", "succeeded"}}, .updated_since = t0 + 20'000}).size(), 5u);
  EXPECT_EQ(ids({.kind = "jobs", .updated_since = t0 + 30'000}).size(), 0u);
  EXPECT_EQ(ids({.kind = "jobs"}).size(), 30u) << "0: no bound";

  auto old = store_->get("jobs", "job_0003");
  ASSERT_TRUE(old.ok());
  Record again = *old;
  again.updated_at = t0 + 40'000;
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.update(again); }).ok());
  EXPECT_EQ(ids({.kind = "jobs", .updated_since = t0 + 30'000}), std::vector<std::string>{"job_0003"});
}

TEST_P(StoreTest, RejectsUnknownFilterColumnsAndBadLimits) {
  ASSERT_TRUE(insert(make_record("jobs", "job_1", "a", "ten_a")).ok());
  auto bad = store_->list({.kind = "jobs", .eq = {{"body", "x"}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Code::kInvalid);
  EXPECT_EQ(bad.error().fields.at(0).field, "body");
  // An injection attempt is just an unknown column name.
  auto inj = store_->count("jobs", {{"state = state OR 1=1; --", "x"}});
  ASSERT_FALSE(inj.ok());
  EXPECT_EQ(inj.error().code, Code::kInvalid);
  // ...while a hostile value is only a value.
  EXPECT_EQ(store_->count("jobs", {{"state", "' OR 1=1 --"}}).value(), 0);

  for (int limit : {0, -1, 1001}) {
    auto r = store_->list({.kind = "jobs", .limit = limit});
    ASSERT_FALSE(r.ok()) << limit;
    EXPECT_EQ(r.error().code, Code::kInvalid);
    EXPECT_EQ(r.error().fields.at(0).field, "limit");
  }
  EXPECT_TRUE(store_->list({.kind = "jobs", .limit = 1}).ok());
  EXPECT_TRUE(store_->list({.kind = "jobs", .limit = 1000}).ok());
  auto no_kind = store_->list({.kind = ""});
  ASSERT_FALSE(no_kind.ok());
  EXPECT_EQ(no_kind.error().fields.at(0).field, "kind");

  auto tok = store_->tokens({{"role", "admin"}});
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.error().fields.at(0).field, "role");
}

TEST_P(StoreTest, FailedCallbackRollsBackEverything) {
  auto s = store_->write([&](StoreTx& tx) -> Status {
    EXPECT_TRUE(tx.insert(make_record("tenants", "ten_1", "one")).ok());
    EXPECT_TRUE(tx.append_audit({.at = 1, .actor = "usr_1", .action = "create", .kind = "tenants"}).ok());
    EXPECT_TRUE(tx.append_job_event({.job_id = "job_1", .at = 1, .from_state = "", .to_state = "queued"}).ok());
    EXPECT_TRUE(tx.get("tenants", "ten_1").ok());  // the transaction sees its own writes
    return Error::invalid("quota", "exceeded");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kInvalid);
  EXPECT_EQ(s.error().fields.at(0).field, "quota");
  EXPECT_EQ(store_->count("tenants", {}).value(), 0);
  EXPECT_TRUE(store_->audit("", 10).value().empty());
  EXPECT_TRUE(store_->job_events("job_1").value().empty());

  // A throwing callback rolls back and the exception reaches the caller.
  EXPECT_THROW(store_->write([&](StoreTx& tx) -> Status {
    EXPECT_TRUE(tx.insert(make_record("tenants", "ten_2", "two")).ok());
    throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_EQ(store_->count("tenants", {}).value(), 0);

  // The writer is usable afterwards, and a failed statement does not poison the transaction.
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    EXPECT_TRUE(tx.insert(make_record("tenants", "ten_3", "three")).ok());
    EXPECT_FALSE(tx.insert(make_record("tenants", "ten_4", "three")).ok());  // name taken
    return tx.insert(make_record("tenants", "ten_4", "four"));
  }).ok());
  EXPECT_EQ(store_->count("tenants", {}).value(), 2);
}

TEST_P(StoreTest, NestedWriteIsRefusedNotDeadlocked) {
  auto nested = store_->write([&](StoreTx& tx) -> Status {
    if (auto s = tx.insert(make_record("tenants", "ten_1", "one")); !s) return s;
    return store_->write([](StoreTx&) { return ok_status(); });
  });
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().code, Code::kInternal);
  EXPECT_NE(nested.error().message.find("inside a write() callback"), std::string::npos);
  EXPECT_EQ(store_->count("tenants", {}).value(), 0);
  // The refusal left the writer usable.
  EXPECT_TRUE(insert(make_record("tenants", "ten_1", "one")).ok());
}

TEST_P(StoreTest, TokensByHashAndRevocation) {
  TokenRow t{.id = "tok_1", .user_id = "usr_1", .tenant_id = "ten_a", .role = "tenant_admin", .name = "ci",
             .secret_hash = std::string(64, 'a'), .created_at = 10, .expires_at = 0};
  TokenRow u{.id = "tok_2", .user_id = "usr_2", .supplier_id = "sup_a", .role = "supplier", .name = "agent",
             .secret_hash = std::string(64, 'b'), .created_at = 20, .expires_at = 99};
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    if (auto s = tx.insert_token(t); !s) return s;
    return tx.insert_token(u);
  }).ok());

  auto found = store_->token_by_hash(std::string(64, 'a')).value();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, "tok_1");
  EXPECT_EQ(found->tenant_id, "ten_a");
  EXPECT_EQ(found->role, "tenant_admin");
  EXPECT_FALSE(found->revoked);
  EXPECT_FALSE(store_->token_by_hash(std::string(64, 'c')).value().has_value());

  TokenRow same_hash = t;
  same_hash.id = "tok_3";
  auto dup = store_->write([&](StoreTx& tx) { return tx.insert_token(same_hash); });
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Code::kConflict);
  EXPECT_EQ(dup.error().fields.at(0).field, "secret_hash");

  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.revoke_token("tok_1"); }).ok());
  EXPECT_TRUE(store_->token_by_hash(std::string(64, 'a')).value()->revoked);
  auto missing = store_->write([&](StoreTx& tx) { return tx.revoke_token("tok_9"); });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::kNotFound);

  auto all = store_->tokens({}).value();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "tok_1");  // created first
  auto mine = store_->tokens({{"user_id", "usr_2"}}).value();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].expires_at, 99);
  EXPECT_EQ(mine[0].supplier_id, "sup_a");
  EXPECT_EQ(store_->tokens({{"tenant_id", "ten_a"}}).value().size(), 1u);
}

TEST_P(StoreTest, PruningDeadTokensKeepsTheNewestAndEveryLiveOne) {
  // usr_1: live (never expires), live (expires at 1000), revoked at 3 times, expired at 500;
  // usr_2: one revoked token. At now = 600, dead ones of usr_1: tok_c, tok_d, tok_e, tok_f.
  auto tok = [](std::string id, std::string user, TimeMs created, TimeMs expires, bool revoked) {
    return TokenRow{.id = id,
                    .user_id = user,
                    .role = "viewer",
                    .name = id,
                    .secret_hash = std::string(64, id.back()),
                    .created_at = created,
                    .expires_at = expires,
                    .revoked = revoked};
  };
  ASSERT_TRUE(store_
                  ->write([&](StoreTx& tx) -> Status {
                    for (const TokenRow& t :
                         {tok("tok_a", "usr_1", 10, 0, false), tok("tok_b", "usr_1", 20, 1000, false),
                          tok("tok_c", "usr_1", 30, 0, true), tok("tok_d", "usr_1", 40, 0, true),
                          tok("tok_e", "usr_1", 50, 500, false), tok("tok_f", "usr_1", 60, 0, true),
                          tok("tok_g", "usr_2", 5, 0, true)})
                      if (auto s = tx.insert_token(t); !s) return s;
                    return ok_status();
                  })
                  .ok());
  int64_t pruned = -1;
  ASSERT_TRUE(store_
                  ->write([&](StoreTx& tx) -> Status {
                    auto n = tx.prune_dead_tokens("usr_1", 600, 2);
                    if (!n) return n.error();
                    pruned = *n;
                    return ok_status();
                  })
                  .ok());
  EXPECT_EQ(pruned, 2);
  const std::vector<TokenRow> rows = store_->tokens({}).value();
  std::vector<std::string> left;
  for (const TokenRow& t : rows) left.push_back(t.id);
  EXPECT_EQ(left, (std::vector<std::string>{"tok_g", "tok_a", "tok_b", "tok_e", "tok_f"}));
}

TEST_P(StoreTest, JobEventsKeepAppendOrder) {
  // Same timestamp on purpose: the order is the append order, not the clock.
  const std::vector<std::pair<std::string, std::string>> steps = {
      {"", "queued"}, {"queued", "scheduled"}, {"scheduled", "running"}, {"running", "succeeded"}};
  // The reason keeps its code and nested arguments, not only its English text.
  const Message why = Message("sched.requeued").arg("why", Message("sched.node_failed").arg("node", "nod_1"));
  for (const auto& [from, to] : steps) {
    ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
      if (auto s = tx.append_job_event({.job_id = "job_b", .at = 5, .from_state = "x", .to_state = "y"}); !s) return s;
      return tx.append_job_event({.job_id = "job_a", .at = 5, .from_state = from, .to_state = to, .reason = why});
    }).ok());
  }
  auto events = store_->job_events("job_a").value();
  ASSERT_EQ(events.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(events[i].from_state, steps[i].first);
    EXPECT_EQ(events[i].to_state, steps[i].second);
    EXPECT_EQ(events[i].job_id, "job_a");
    EXPECT_EQ(events[i].reason, why);
    EXPECT_EQ(render_en(events[i].reason), "requeued: node nod_1 failed");
  }
  EXPECT_EQ(store_->job_events("job_b").value().size(), 4u);
  EXPECT_TRUE(store_->job_events("job_c").value().empty());
}

TEST_P(StoreTest, AuditIsNewestFirstPerKind) {
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    for (int i = 0; i < 5; ++i) {
      AuditEntry a{.at = 100 + i, .actor = "usr_1", .action = "update", .kind = i % 2 == 0 ? "jobs" : "offers",
                   .object_id = "obj_" + std::to_string(i), .detail = "{\"n\":" + std::to_string(i) + "}"};
      if (auto s = tx.append_audit(a); !s) return s;
    }
    return ok_status();
  }).ok());
  auto jobs = store_->audit("jobs", 10).value();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].object_id, "obj_4");
  EXPECT_EQ(jobs[2].object_id, "obj_0");
  EXPECT_EQ(jobs[0].detail, "{\"n\":4}");
  EXPECT_EQ(jobs[0].actor, "usr_1");
  auto latest = store_->audit("", 2).value();
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].object_id, "obj_4");
  EXPECT_EQ(latest[1].object_id, "obj_3");
  auto bad = store_->audit("jobs", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().fields.at(0).field, "limit");
}

TEST_P(StoreTest, BodiesRoundTripAsTheSameJson) {
  // What PostgreSQL's jsonb changes (key order, number spelling) must not change the document.
  Record r = make_record("offers", "off_1", "numbers");
  r.body["int_max"] = std::numeric_limits<int64_t>::max();
  r.body["int_min"] = std::numeric_limits<int64_t>::min();
  r.body["uint_max"] = std::numeric_limits<uint64_t>::max();
  r.body["third"] = 1.0 / 3.0;
  r.body["tiny"] = 5e-324;
  r.body["huge"] = std::numeric_limits<double>::max();
  r.body["float_whole"] = 1000.0;
  r.body["neg"] = -0.1;
  r.body["text"] = "quote \" backslash \\ tab \t unicode \u00e9\u4e2d\U0001F600";
  r.body["nested"] = {{"b", {1, 2, {{"z", nullptr}, {"a", true}}}}, {"a", nlohmann::json::object()},
                      {"empty", nlohmann::json::array()}};
  ASSERT_TRUE(insert(r).ok());
  auto got = store_->get("offers", "off_1");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->body, r.body) << got->body.dump();
  EXPECT_EQ(got->body["int_max"].get<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(got->body["uint_max"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(got->body["third"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(got->body["tiny"].get<double>(), 5e-324);
  EXPECT_EQ(got->body["huge"].get<double>(), std::numeric_limits<double>::max());
  EXPECT_EQ(got->body["text"], r.body["text"]);
}

TEST_P(StoreTest, RejectsBodiesThatAreNotUtf8) {
  Record r = make_record("tenants", "ten_1", "one");
  r.body["bad"] = std::string("\xff\xfe");
  auto s = insert(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kInvalid);
  EXPECT_EQ(s.error().fields.at(0).field, "body");
}

TEST_P(StoreTest, DataSurvivesCloseAndReopen) {
  ASSERT_TRUE(insert(make_record("offers", "off_1", "h100-spot", "", "sup_a")).ok());
  ASSERT_TRUE(store_->write([](StoreTx& tx) {
    return tx.insert_token({.id = "tok_1", .user_id = "usr_1", .role = "operator", .secret_hash = "h"});
  }).ok());
  const int version = store_->schema_version();
  EXPECT_EQ(version, backend_->latest_schema_version());
  store_.reset();
  store_ = reopen();
  ASSERT_NE(store_, nullptr);
  auto got = store_->get("offers", "off_1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->supplier_id, "sup_a");
  EXPECT_EQ(got->body["name"], "h100-spot");
  EXPECT_EQ(got->version, 1);
  EXPECT_TRUE(store_->token_by_hash("h").value().has_value());
  EXPECT_TRUE(store_->healthy());
  EXPECT_EQ(store_->schema_version(), version);  // nothing left to migrate
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
