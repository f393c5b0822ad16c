// The market's books beside the store: lanes locked and stamped, copies of books checked by stamp
// (market_books.h).
#include "server/api/market_books.h"

#include <algorithm>

#include "core/ids.h"

namespace gpurent {

namespace {

constexpr const char* kLaneKind = "market-lanes";
constexpr const char* kOrderKind = "market-orders";

bool is_open(const Record& r) { return r.state == "open"; }

}  // namespace

// ---- MarketBooks ----

std::optional<OrderList> MarketBooks::get(const std::string& lane, const std::string& stamp, const std::string& book) const {
  std::lock_guard lock(mu_);
  auto l = lanes_.find(lane);
  if (l == lanes_.end() || stamp.empty() || l->second.stamp != stamp) return std::nullopt;
  auto b = l->second.books.find(book);
  if (b == l->second.books.end()) return std::nullopt;
  return b->second;
}

void MarketBooks::put(const std::string& lane, const std::string& was, const std::string& stamp, const std::string& book,
                      OrderList open) {
  std::lock_guard lock(mu_);
  Lane& l = lanes_[lane];
  auto forget = [&](Lane& x) {
    for (const auto& [_, orders] : x.books) orders_ -= orders.size();
    x.books.clear();
  };
  // A copy taken at another stamp than the one this write found may miss a change in between
  // (another server's, or a commit that reached here later): only this book is known now.
  if (was.empty() || l.stamp != was) forget(l);
  l.stamp = stamp;
  if (auto b = l.books.find(book); b != l.books.end()) {
    orders_ -= b->second.size();
    l.books.erase(b);
  }
  if (orders_ + open.size() > max_orders_) {
    for (auto& [_, x] : lanes_) forget(x);
    if (open.size() > max_orders_) return;
  }
  orders_ += open.size();
  l.books.emplace(book, std::move(open));
}

size_t MarketBooks::orders() const {
  std::lock_guard lock(mu_);
  return orders_;
}

std::string market_lane_id(const std::string& gpu_model, const std::string& region) {
  return "mln_" + sha256_hex(gpu_model + "\n" + region).substr(0, 24);
}

Result<std::string> market_lane_stamp(StoreReader& store, const std::string& gpu_model, const std::string& region) {
  auto lane = store.get(kLaneKind, market_lane_id(gpu_model, region));
  if (!lane) return lane.error().code == Code::kNotFound ? Result<std::string>(std::string()) : Result<std::string>(lane.error());
  return lane->body.value("stamp", "");
}

bool before_in_book(const Record& a, const Record& b) {
  const int64_t sa = a.body.value("seq", int64_t{0}), sb = b.body.value("seq", int64_t{0});
  return sa != sb ? sa < sb : a.id < b.id;
}

void sort_by_seq(std::vector<Record>& orders) { std::sort(orders.begin(), orders.end(), before_in_book); }

// ---- BookTx ----

// The transaction, passing every call through and noting the orders written: each order's record
// as it is stored after this transaction's last write of it.
class BookTx::Recording final : public StoreTx {
 public:
  explicit Recording(StoreTx& tx) : tx_(tx) {}
  const std::map<std::string, Record>& written() const { return written_; }

  Status insert(const Record& r) override {
    Status s = tx_.insert(r);
    if (s && r.kind == kOrderKind) {
      Record& w = written_[r.id] = r;
      w.version = 1;
    }
    return s;
  }
  Status update(const Record& r) override {
    Status s = tx_.update(r);
    if (s && r.kind == kOrderKind) {
      Record& w = written_[r.id] = r;
      w.version = r.version + 1;
    }
    return s;
  }
  Status remove(const std::string& kind, const std::string& id) override {
    Status s = tx_.remove(kind, id);
    if (s && kind == kOrderKind) {
      Record gone;
      gone.kind = kind;
      gone.id = id;
      gone.state = "removed";
      written_[id] = gone;
    }
    return s;
  }
  Result<Record> get(const std::string& kind, const std::string& id) override { return tx_.get(kind, id); }
  Result<Record> get_locked(const std::string& kind, const std::string& id) override { return tx_.get_locked(kind, id); }
  Result<Record> get_shared(const std::string& kind, const std::string& id) override { return tx_.get_shared(kind, id); }
  Result<Page> list(const ListQuery& q) override { return tx_.list(q); }
  Result<int64_t> count(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return tx_.count(kind, eq);
  }
  Result<std::vector<std::string>> list_ids(const std::string& kind, const std::map<std::string, std::string>& eq) override {
    return tx_.list_ids(kind, eq);
  }
  Result<int64_t> tenant_stored_bytes(const std::string& tenant_id) override {
    return tx_.tenant_stored_bytes(tenant_id);
  }
  Status insert_token(const TokenRow& t) override { return tx_.insert_token(t); }
  Status revoke_token(const std::string& token_id) override { return tx_.revoke_token(token_id); }
  Result<std::vector<TokenRow>> list_tokens(const std::map<std::string, std::string>& eq) override {
    return tx_.list_tokens(eq);
  }
  Status revoke_user_tokens(const std::string& user_id) override { return tx_.revoke_user_tokens(user_id); }
  Result<int64_t> prune_dead_tokens(const std::string& user_id, TimeMs now, int64_t keep) override {
    return tx_.prune_dead_tokens(user_id, now, keep);
  }
  Status append_job_event(const JobEvent& e) override { return tx_.append_job_event(e); }
  Status append_audit(const AuditEntry& a) override { return tx_.append_audit(a); }
  Result<UsageIngestOutcome> insert_usage_batch(const UsageBatchRows& b) override { return tx_.insert_usage_batch(b); }
  Result<UsageRollupStats> roll_up_usage(TimeMs raw_before, TimeMs keys_before) override {
    return tx_.roll_up_usage(raw_before, keys_before);
  }
  Status insert_job_metrics(const std::vector<JobMetricRow>& rows) override { return tx_.insert_job_metrics(rows); }

 private:
  StoreTx& tx_;
  std::map<std::string, Record> written_;
};

BookTx::BookTx(MarketBooks* cache, StoreTx& tx) : cache_(cache), rec_(std::make_unique<Recording>(tx)) {}
BookTx::~BookTx() = default;

StoreTx& BookTx::tx() { return *rec_; }

Result<Record> lock_market_lane(StoreTx& tx, const std::string& gpu_model, const std::string& region) {
  Record r;  // made by the lane's first write
  r.kind = kLaneKind;
  r.id = market_lane_id(gpu_model, region);
  r.name = gpu_model + "/" + region;
  r.gpu_model = gpu_model;
  r.region = region;
  r.body = {{"gpu_model", gpu_model}, {"region", region}, {"stamp", ""}};
  return lock_or_insert(tx, r);
}

Status BookTx::lock(const std::string& gpu_model, const std::string& region) {
  const std::string lane = market_lane_id(gpu_model, region);
  if (!lane_.empty()) {
    if (lane == lane_) return ok_status();
    return Error::make(Code::kInternal, "a market write changes two lanes: " + lane_ + " and " + lane);
  }
  auto cur = lock_market_lane(*rec_, gpu_model, region);
  if (!cur) return cur.error();
  Record r = *cur;
  was_ = r.body.value("stamp", "");
  stamp_ = random_hex(8);
  r.body["stamp"] = stamp_;
  if (Status s = rec_->update(r); !s) return s;
  ++r.version;
  lane_rec_ = std::move(r);
  lane_ = lane;
  return ok_status();
}

Result<int64_t> BookTx::next_seq() {
  if (!lane_rec_) return Error::make(Code::kInternal, "a market order numbered outside its lane's lock");
  Record& r = *lane_rec_;
  int64_t last = 0;
  if (r.body.contains("seq") && r.body["seq"].is_number_integer()) {
    last = r.body["seq"].get<int64_t>();
  } else {  // once per lane: above every order stored before the lanes kept their numbers
    auto all = rec_->count(kOrderKind, {});
    if (!all) return all.error();
    last = *all;
  }
  r.body["seq"] = last + 1;
  if (Status s = rec_->update(r); !s) return s.error();
  ++r.version;
  return last + 1;
}

OrderList BookTx::current() const {
  const auto& written = rec_->written();
  if (written.empty()) return *found_;
  OrderList out;
  out.reserve(found_->size() + written.size());
  for (const auto& r : *found_) {
    auto w = written.find(r->id);
    if (w == written.end()) out.push_back(r);
    else if (is_open(w->second) && in_book_(w->second.body)) out.push_back(std::make_shared<const Record>(w->second));
  }
  // Orders new to the book go to their place (their sequence numbers are the lane's highest, so
  // this is the end but for another server's orders written at the same time in another lane).
  for (const auto& [id, w] : written) {
    if (!is_open(w) || !in_book_(w.body)) continue;
    if (std::any_of(found_->begin(), found_->end(), [&](const auto& r) { return r->id == id; })) continue;
    auto at = std::upper_bound(out.begin(), out.end(), w, [](const Record& x, const auto& r) { return before_in_book(x, *r); });
    out.insert(at, std::make_shared<const Record>(w));
  }
  return out;
}

Result<OrderList> BookTx::open_orders(const std::string& book, const std::function<bool(const nlohmann::json&)>& in_book,
                                      const std::function<Result<std::vector<Record>>(StoreTx&)>& read) {
  if (lane_.empty()) return Error::make(Code::kInternal, "a market book is read before its lane is locked");
  if (!found_) {
    book_ = book;
    in_book_ = in_book;
    if (cache_) found_ = cache_->get(lane_, was_, book);
    if (!found_) {
      auto stored = read(*rec_);
      if (!stored) return stored.error();
      OrderList list;
      list.reserve(stored->size());
      // Orders this transaction wrote before reading the book (none today) are applied by current().
      for (Record& r : *stored)
        if (!rec_->written().count(r.id)) list.push_back(std::make_shared<const Record>(std::move(r)));
      found_ = std::move(list);
    }
  } else if (book != book_) {
    return Error::make(Code::kInternal, "a market write changes two books: " + book_ + " and " + book);
  }
  return current();
}

void BookTx::committed() {
  if (!cache_ || !found_) return;
  cache_->put(lane_, was_, stamp_, book_, current());
}

}  // namespace gpurent
