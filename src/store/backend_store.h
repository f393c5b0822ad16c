// The backend-independent shell of a Store, shared by SqliteStore (sqlite_store.cc) and
// PostgresStore (pg_store.cc):
//  * WriterSlot: one write() at a time, a nested write() from inside a callback refused (it
//    would deadlock), the callback's error or exception rolling the transaction back;
//  * GuardedTx: the StoreTx handed to a callback, each operation one call of the backend's free
//    function for it (insert_object(Conn&, ...), store_usage_batch(Conn&, ...): sqlite_queries.h,
//    sqlite_usage.h, pg_queries.h), run through the backend's Guard; the object writes also keep
//    each tenant's stored bytes (keep_tenant_storage);
//  * PooledReads: StoreReader's reads, each one call of the backend's free function on a reader
//    connection from the backend's pool.
// The calls are unqualified and dependent, so each backend's overloads are found by
// argument-dependent lookup where the template is used. Internal to src/store.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "store/store.h"
#include "store/store_checks.h"

namespace gpurent {

// Serialises write() calls. Thread-safe.
class WriterSlot {
 public:
  // Runs body() holding the writer mutex; kInternal, without waiting, when called from inside a
  // body on the same thread.
  Status run(const std::function<Status()>& body) {
    if (owner_.load() == std::this_thread::get_id())
      return Error::make(Code::kInternal, "Store::write() called from inside a write() callback");
    std::lock_guard lock(mu_);
    owner_.store(std::this_thread::get_id());
    struct ClearOwner {
      std::atomic<std::thread::id>& owner;
      ~ClearOwner() { owner.store(std::thread::id()); }
    } clear_owner{owner_};
    return body();
  }

 private:
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

// Runs a write() callback: on an exception calls rollback() and rethrows; on an error calls
// rollback() and returns it.
inline Status run_write_callback(const std::function<Status(StoreTx&)>& fn, StoreTx& tx,
                                 const std::function<void()>& rollback) {
  Status result = ok_status();
  try {
    result = fn(tx);
  } catch (...) {
    rollback();
    throw;
  }
  if (!result) rollback();
  return result;
}

// The change a write of an artifact or image makes to its tenant's stored bytes (StoreTx::
// tenant_stored_bytes; `before`/`after` null where the record did not / does not exist), applied
// through the backend's add_tenant_storage(Conn&, tenant, delta). Other kinds: nothing, not even
// a read (the reason this is code and not a trigger: migrations.cc, version 7).
inline bool counts_storage(const std::string& kind) { return kind == "artifacts" || kind == "images"; }
template <class Conn>
Status keep_tenant_storage(Conn& db, const Record* before, const Record* after) {
  auto counted = [](const Record* r) { return r && counts_storage(r->kind) && !r->tenant_id.empty(); };
  const int64_t was = counted(before) ? declared_bytes(before->body) : 0;
  const int64_t is = counted(after) ? declared_bytes(after->body) : 0;
  if (counted(before) && counted(after) && before->tenant_id == after->tenant_id)
    return add_tenant_storage(db, after->tenant_id, is - was);
  if (counted(before))
    if (auto s = add_tenant_storage(db, before->tenant_id, -was); !s) return s;
  if (counted(after)) return add_tenant_storage(db, after->tenant_id, is);
  return ok_status();
}

// Guard: `template <class F> auto op(bool writes, F&& fn)` runs fn(Conn&) when the transaction is
// still usable (an error otherwise); `writes` says whether the operation changes anything.
template <class Guard>
class GuardedTx final : public StoreTx {
 public:
  explicit GuardedTx(Guard& guard) : g_(guard) {}

  Status insert(const Record& r) override {
    return g_.op(true, [&](auto& db) -> Status {
      if (auto s = insert_object(db, r); !s) return s;
      return keep_tenant_storage(db, nullptr, &r);
    });
  }
  // An artifact's or image's old size is read under a row lock first (PostgreSQL: another server
  // cannot change it between the read and the write); the update's own version check says
  // whether it is the one replaced.
  Status update(const Record& r) override {
    return g_.op(true, [&](auto& db) -> Status {
      std::optional<Record> before;
      if (counts_storage(r.kind)) {
        auto old = get_object_locked(db, r.kind, r.id);
        if (!old && old.error().code != Code::kNotFound) return old.error();
        if (old) before = std::move(old).value();
      }
      if (auto s = update_object(db, r); !s) return s;
      return keep_tenant_storage(db, before ? &*before : nullptr, &r);
    });
  }
  Status remove(const std::string& kind, const std::string& id) override {
    return g_.op(true, [&](auto& db) -> Status {
      std::optional<Record> before;
      if (counts_storage(kind)) {
        auto old = get_object_locked(db, kind, id);
        if (!old && old.error().code != Code::kNotFound) return old.error();
        if (old) before = std::move(old).value();
      }
      if (auto s = remove_object(db, kind, id); !s) return s;
      return keep_tenant_storage(db, before ? &*before : nullptr, nullptr);
    });
  }
  Result<Record> get(const std::string& kind, const std::string& id) override {
    return g_.op(false, [&](auto& db) { return get_object(db, kind, id); });
  }
  // Row locks count as writes for the guard: on PostgreSQL a later failed operation rolls back to
  // the savepoint, and a lock taken after it would go with it (lock_or_insert's conflict, then the
  // caller's parent holds and lanes silently gone).
  Result<Record> get_locked(const std::string& kind, const std::string& id) override {
    return g_.op(true, [&](auto& db) { return get_object_locked(db, kind, id); });
  }
  Result<Record> get_shared(const std::string& kind, const std::string& id) override {
    return g_.op(true, [&](auto& db) { return get_object_shared(db, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override {
    return g_.op(false, [&](auto& db) { return list_objects(db, q); });
  }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return g_.op(false, [&](auto& db) { return count_objects(db, kind, eq); });
  }
  Result<std::vector<std::string>> list_ids(const std::string& kind,
                                            const std::map<std::string, std::string>& eq) override {
    return g_.op(false, [&](auto& db) { return list_object_ids(db, kind, eq); });
  }
  Result<int64_t> tenant_stored_bytes(const std::string& tenant_id) override {
    return g_.op(false, [&](auto& db) { return select_tenant_stored_bytes(db, tenant_id); });
  }
  Status insert_token(const TokenRow& t) override {
    return g_.op(true, [&](auto& db) { return insert_token_row(db, t); });
  }
  Status revoke_token(const std::string& id) override {
    return g_.op(true, [&](auto& db) { return revoke_token_row(db, id); });
  }
  Result<std::vector<TokenRow>> list_tokens(const std::map<std::string, std::string>& eq) override {
    return g_.op(false, [&](auto& db) { return select_tokens(db, eq); });
  }
  Status revoke_user_tokens(const std::string& user_id) override {
    return g_.op(true, [&](auto& db) { return revoke_tokens_of_user(db, user_id); });
  }
  Result<int64_t> prune_dead_tokens(const std::string& user_id, TimeMs now, int64_t keep) override {
    return g_.op(true, [&](auto& db) { return delete_dead_tokens(db, user_id, now, keep); });
  }
  Status append_job_event(const JobEvent& e) override {
    return g_.op(true, [&](auto& db) { return insert_job_event(db, e); });
  }
  Status append_audit(const AuditEntry& a) override {
    return g_.op(true, [&](auto& db) { return insert_audit_entry(db, a); });
  }
  Result<UsageIngestOutcome> insert_usage_batch(const UsageBatchRows& b) override {
    return g_.op(true, [&](auto& db) { return store_usage_batch(db, b); });
  }
  Result<UsageRollupStats> roll_up_usage(TimeMs raw_before, TimeMs keys_before) override {
    return g_.op(true, [&](auto& db) { return roll_up_usage_rows(db, raw_before, keys_before); });
  }
  Status insert_job_metrics(const std::vector<JobMetricRow>& rows) override {
    return g_.op(true, [&](auto& db) { return upsert_job_metrics(db, rows); });
  }

 private:
  Guard& g_;
};

// The reads of a Store, on Derived's reader pool: Derived (CRTP) has `readers()`, a pool whose
// `with(fn)` runs fn(Conn&) on a connection no other thread is using.
template <class Derived>
class PooledReads : public Store {
 public:
  Result<Record> get(const std::string& kind, const std::string& id) override {
    return pool().with([&](auto& db) { return get_object(db, kind, id); });
  }
  Result<Page> list(const ListQuery& q) override {
    return pool().with([&](auto& db) { return list_objects(db, q); });
  }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return pool().with([&](auto& db) { return count_objects(db, kind, eq); });
  }
  Result<int64_t> tenant_stored_bytes(const std::string& tenant_id) override {
    return pool().with([&](auto& db) { return select_tenant_stored_bytes(db, tenant_id); });
  }
  Result<std::optional<TokenRow>> token_by_hash(const std::string& secret_hash) override {
    return pool().with([&](auto& db) { return find_token_by_hash(db, secret_hash); });
  }
  Result<std::vector<TokenRow>> tokens(const std::map<std::string, std::string>& eq) override {
    return pool().with([&](auto& db) { return select_tokens(db, eq); });
  }
  Result<std::vector<JobEvent>> job_events(const std::string& job_id) override {
    return pool().with([&](auto& db) { return list_job_events(db, job_id); });
  }
  Result<std::vector<AuditEntry>> audit(const std::string& kind, int limit) override {
    return pool().with([&](auto& db) { return list_audit(db, kind, limit); });
  }
  Result<std::vector<GpuUsagePoint>> gpu_usage(const std::string& node_id, int64_t gpu, TimeMs from, TimeMs to,
                                               int limit) override {
    return pool().with([&](auto& db) { return query_gpu_usage(db, node_id, gpu, from, to, limit); });
  }
  Result<std::vector<JobUsagePoint>> job_usage(const std::string& job_id, TimeMs from, TimeMs to, int limit) override {
    return pool().with([&](auto& db) { return query_job_usage(db, job_id, from, to, limit); });
  }
  Result<std::vector<std::pair<std::string, JobUsagePoint>>> tenant_job_usage(const std::string& tenant_id, TimeMs from,
                                                                              TimeMs to, int limit) override {
    return pool().with([&](auto& db) { return query_tenant_job_usage(db, tenant_id, from, to, limit); });
  }
  Result<std::vector<JobUsageTotals>> job_usage_totals(const JobUsageFilter& f) override {
    return pool().with([&](auto& db) { return query_job_usage_totals(db, f); });
  }
  Result<std::vector<JobMetricRow>> job_metrics(const JobMetricFilter& f) override {
    return pool().with([&](auto& db) { return query_job_metrics(db, f); });
  }
  Result<std::vector<GpuBucket>> gpu_usage_buckets(const GpuBucketQuery& q) override {
    return pool().with([&](auto& db) { return query_gpu_usage_buckets(db, q); });
  }
  bool healthy() override { return read_version().ok(); }

  // The schema version as a reader connection sees it.
  Result<int> read_version() {
    return pool().with([](auto& db) { return applied_schema_version(db); });
  }

 private:
  auto& pool() { return static_cast<Derived*>(this)->readers(); }
};

}  // namespace gpurent
