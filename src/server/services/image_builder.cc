#include "server/services/image_builder.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <sstream>

#include "core/json_limits.h"
#include "exec/process.h"
#include "server/services/artifact_store.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

constexpr int kBuildTimeoutMs = 30 * 60 * 1000;
constexpr size_t kMaxPackages = 5000;

// The builders running in this process, by their server's control loop (wake_image_builder finds
// its server's).
struct BuilderRegistry {
  std::mutex mu;
  std::map<const ControlLoop*, ImageBuilder*> builders;
};

BuilderRegistry& builder_registry() {
  static BuilderRegistry r;
  return r;
}

Result<Image> decode_recipe(const Record& r) { return decode_record(r, decode_image, "it cannot be built"); }

// The last words of a failed command, printable, on one line, well-formed UTF-8 (cut at a byte
// count, a character may be split; stored and logged as JSON, a bad byte would throw).
std::string last_words(const std::string& err) {
  std::string s = valid_utf8(err.size() > 600 ? std::string_view(err).substr(err.size() - 600) : std::string_view(err));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// "name=version" of each installed package, from the tarball's dpkg status file.
std::vector<std::string> installed_packages(const std::string& tar) {
  auto out = run_process({"tar", "-xOf", tar, "./var/lib/dpkg/status"}, {}, "", 60'000);
  std::vector<std::string> pkgs;
  if (!out || out->exit_code != 0) return pkgs;
  std::istringstream in(out->out);
  std::string line, name, version;
  bool installed = false;
  auto flush = [&] {
    if (!name.empty() && installed && pkgs.size() < kMaxPackages) pkgs.push_back(name + "=" + version);
    name.clear(), version.clear(), installed = false;
  };
  while (std::getline(in, line)) {
    if (line.empty()) flush();
    else if (line.rfind("Package: ", 0) == 0) name = line.substr(9);
    else if (line.rfind("Version: ", 0) == 0) version = line.substr(9);
    else if (line.rfind("Status: ", 0) == 0) installed = line.find(" installed") != std::string::npos;
  }
  flush();
  std::sort(pkgs.begin(), pkgs.end());
  return pkgs;
}

// Moves an image to `to` inside a write, applying `change`; with an audit entry when `action`.
Status update_image(ServiceContext& app, const std::string& id, ImageState to, const std::function<void(Image&)>& change,
                    const char* action = nullptr) {
  return app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("images", id);
    if (!cur) return cur.error();
    auto i = decode_recipe(*cur);
    if (!i) return i.error();
    i->state = to;
    change(*i);
    Record u = *cur;
    u.state = index_of(*i).state;
    u.body = to_json(*i);
    u.updated_at = app.clock.now();
    if (auto s = tx.update(u); !s) return s;
    if (!action) return ok_status();
    return tx.append_audit({u.updated_at, "image-builder", action, "images", id, u.name + " sha256:" + i->sha256});
  });
}

}  // namespace

ImageBuilder::ImageBuilder(ServiceContext& app, std::string mirror) : app_(app), mirror_(std::move(mirror)) {}

ImageBuilder::~ImageBuilder() { stop(); }

Result<bool> ImageBuilder::build_one() {
  // A queued image becomes "building": the oldest of the tenant served longest ago, so that one
  // tenant's many recipes do not hold everyone else's behind them.
  std::optional<Record> picked;
  Status st = app_.loop.run([&](StoreTx& tx) -> Status {
    auto queued = list_all(tx, "images", {{"state", "queued"}});
    if (!queued) return queued.error();
    auto served = [&](const Record& r) {
      auto it = last_served_.find(r.tenant_id);
      return std::make_pair(it == last_served_.end() ? TimeMs{0} : it->second, r.created_at);
    };
    for (const Record& r : *queued)
      if (!picked || served(r) < served(*picked)) picked = r;
    if (!picked) return ok_status();
    auto i = decode_recipe(*picked);
    if (!i) return i.error();
    i->state = ImageState::kBuilding;
    picked->state = index_of(*i).state;
    picked->body = to_json(*i);
    picked->updated_at = app_.clock.now();
    return tx.update(*picked);
  });
  if (!st) return st.error();
  if (!picked) return false;
  picked_ = picked->id;
  last_served_[picked->tenant_id] = app_.clock.now();
  auto image = decode_recipe(*picked);
  if (!image) return image.error();
  if (!image->recipe) return update_image(app_, picked->id, ImageState::kFailed, [](Image& i) { i.error = "no recipe"; }).ok();
  // The image failed, saying why (logged too); the next one may be built.
  auto fail = [&](const std::string& why) -> Result<bool> {
    spdlog::warn("{}", json({{"event", "image_build_failed"}, {"image", picked->id}, {"error", why}})
                           .dump(-1, ' ', false, json::error_handler_t::replace));
    // It keeps a digest only while that content is in the store (published by an earlier try of
    // this build, which deleting the failed image then releases); a digest of a file not there
    // names nothing.
    ArtifactStore store(artifact_root(app_.opts));
    if (auto s = update_image(app_, picked->id, ImageState::kFailed,
                              [&](Image& i) {
                                i.error = why;
                                if (!i.sha256.empty() && ::access(store.content_path(i.sha256).c_str(), R_OK) != 0)
                                  i.sha256.clear();
                              });
        !s)
      return s.error();
    return true;
  };

  // The same recipe built before: its content, at once.
  auto ready = list_all(app_.store, "images", {{"state", "ready"}});
  if (!ready) return ready.error();
  // The content lock is never held across a write (loop.run): the scheduler's tick takes it too
  // (image_saves.cc), and a tick waiting for it behind a holder waiting for the tick would stop
  // the single writer. So the image names the content first (still building: a delete of another
  // record with the same content keeps the file from then on), the file is checked, then it is
  // ready.
  for (const Record& r : *ready) {
    auto other = decode_image(r.body);
    if (!other || !other->recipe || !(*other->recipe == *image->recipe)) continue;
    ArtifactStore files(artifact_root(app_.opts));
    if (::access(files.content_path(other->sha256).c_str(), R_OK) != 0) continue;
    // Its size counts against the tenant's storage as a build's would (the content is shared, the
    // quota is not).
    if (auto room = build_room(picked->tenant_id, other->size_bytes, false); !room) return fail(room.error().message);
    if (auto s = update_image(app_, picked->id, ImageState::kBuilding, [&](Image& i) { i.sha256 = other->sha256; }); !s)
      return s.error();
    bool there = false;
    {
      auto content = files.content_lock();
      there = ::access(files.content_path(other->sha256).c_str(), R_OK) == 0;
    }
    if (!there) continue;  // removed before the name took hold: built below
    if (auto s = update_image(app_, picked->id, ImageState::kReady, [&](Image& i) {
          i.sha256 = other->sha256, i.size_bytes = other->size_bytes, i.packages = other->packages;
          i.received_bytes = other->size_bytes, i.ready_at = app_.clock.now(), i.error.clear();
        }, "build");
        !s)
      return s.error();
    return true;
  }

  ArtifactStore files(artifact_root(app_.opts));
  if (auto s = files.init(); !s) return s.error();
  // Room first: the tenant's storage quota not used up, a GiB free beside the largest image.
  if (auto room = build_room(picked->tenant_id, 0); !room) return fail(room.error().message);
  const std::string out = files.upload_path(picked->id) + ".build.tar";
  ::unlink(out.c_str());
  std::vector<std::string> argv = {"mmdebstrap", "--quiet", "--variant=" + image->recipe->variant, "--format=tar"};
  if (!image->recipe->packages.empty()) {
    std::string include = "--include=";
    for (size_t k = 0; k < image->recipe->packages.size(); ++k) include += (k ? "," : "") + image->recipe->packages[k];
    argv.push_back(include);
  }
  argv.insert(argv.end(), {image->recipe->suite, out, mirror_});
  spdlog::info("{}", json({{"event", "image_build_started"}, {"image", picked->id}, {"name", image->name}}).dump());
  auto ran = run_process(argv, {}, "", kBuildTimeoutMs);
  std::string error;
  if (!ran) error = ran.error().message;
  else if (ran->exit_code != 0) error = "mmdebstrap exit " + std::to_string(ran->exit_code) + ": " + last_words(ran->err);
  Result<std::string> sha = error.empty() ? ArtifactStore::file_sha256(out) : Result<std::string>(std::string());
  if (error.empty() && !sha) error = sha.error().message;
  if (!error.empty()) {
    ::unlink(out.c_str());
    return fail(error);
  }
  struct stat stt {};
  ::stat(out.c_str(), &stt);
  // What was built counts against the tenant's quota (and the size limit) like an upload.
  if (auto room = build_room(picked->tenant_id, stt.st_size); !room) {
    ::unlink(out.c_str());
    return fail(room.error().message);
  }
  const auto packages = installed_packages(out);
  // Named first, then published (without holding the content lock across a write: see above).
  if (auto s = update_image(app_, picked->id, ImageState::kBuilding, [&](Image& i) { i.sha256 = *sha; }); !s)
    return s.error();
  {
    auto content = files.content_lock();
    if (auto s = files.publish_file(out, *sha); !s) return s.error();
  }
  if (auto s = update_image(app_, picked->id, ImageState::kReady, [&](Image& i) {
        i.sha256 = *sha, i.size_bytes = stt.st_size, i.received_bytes = stt.st_size, i.packages = packages;
        i.ready_at = app_.clock.now(), i.error.clear();
      }, "build");
      !s)
    return s.error();
  spdlog::info("{}", json({{"event", "image_built"}, {"image", picked->id}, {"sha256", *sha}, {"bytes", stt.st_size}}).dump());
  return true;
}

Status ImageBuilder::build_room(const std::string& tenant_id, int64_t size, bool on_disk) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  const int64_t max = app_.opts.artifact_max_gib * kGiB;
  if (size > max)
    return Error::make(Code::kInvalid, "the image is " + std::to_string(size) + " bytes, more than the " +
                                           std::to_string(max) + " an image may have (--artifact-max-gib)");
  ArtifactStore files(artifact_root(app_.opts));
  const int64_t free = files.free_bytes();
  const int64_t want = size == 0 ? 2 * kGiB : kGiB;  // before: room to build, a GiB to spare; after: the GiB left
  if (on_disk && free >= 0 && free < want)
    return Error::make(Code::kUnavailable, "the artifact disk has " + std::to_string(free) + " bytes free, less than " +
                                               std::to_string(want) + (size == 0 ? " to build an image" : " after the build"));
  if (tenant_id.empty()) return ok_status();
  auto used = app_.store.tenant_stored_bytes(tenant_id);
  if (!used) return used.error();
  const int64_t limit = app_.opts.artifact_tenant_gib * kGiB;
  if (*used + std::max<int64_t>(size, 1) > limit)
    return Error::make(Code::kInvalid, "the tenant's artifacts and images hold " + std::to_string(*used) + " of its " +
                                           std::to_string(limit) + " bytes (--artifact-tenant-gib): no room for " +
                                           (size ? std::to_string(size) + " more" : std::string("another image")));
  return ok_status();
}

void ImageBuilder::start() {
  // A build a restart interrupted is queued again.
  (void)app_.loop.run([&](StoreTx& tx) -> Status {
    auto building = list_all(tx, "images", {{"state", "building"}});
    if (!building) return building.error();
    for (Record r : *building) {
      auto i = decode_recipe(r);
      if (!i) continue;
      i->state = ImageState::kQueued;
      r.state = index_of(*i).state;
      r.body = to_json(*i);
      if (auto s = tx.update(r); !s) return s;
    }
    return ok_status();
  });
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = false;
  }
  {
    std::lock_guard<std::mutex> g(builder_registry().mu);
    builder_registry().builders[&app_.loop] = this;
  }
  thread_ = std::thread([this] { run(); });
}

// Builds while images are queued; then waits for a wake-up (a minute at most: a recipe queued by
// another server on the same database).
void ImageBuilder::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    for (bool more = true; more;) {
      // An exception here would end the server (this thread catches nothing else), and the image,
      // queued again at the next start, would end it again.
      auto built = [&]() -> Result<bool> {
        try {
          return build_one();
        } catch (const std::exception& e) {
          const std::string why = valid_utf8(std::string("building the image: ") + e.what());
          if (!picked_.empty())  // failed, saying why: not left `building` until a restart
            (void)update_image(app_, picked_, ImageState::kFailed, [&](Image& i) { i.error = why; });
          return Error::make(Code::kInternal, why);
        }
      }();
      picked_.clear();
      if (!built && app_.loop.running())
        spdlog::error("{}", json({{"event", "image_builder_failed"}, {"error", built.error().message}})
                                .dump(-1, ' ', false, json::error_handler_t::replace));
      std::lock_guard<std::mutex> g(mu_);
      more = built && *built && !stopping_;
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return stopping_ || woken_; });
  }
}

void ImageBuilder::wake() {
  {
    std::lock_guard<std::mutex> g(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void ImageBuilder::stop() {
  {
    std::lock_guard<std::mutex> g(builder_registry().mu);
    auto it = builder_registry().builders.find(&app_.loop);
    if (it != builder_registry().builders.end() && it->second == this) builder_registry().builders.erase(it);
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void wake_image_builder(const ServiceContext& app) {
  std::lock_guard<std::mutex> g(builder_registry().mu);  // held: the builder is not stopped meanwhile
  auto it = builder_registry().builders.find(&app.loop);
  if (it != builder_registry().builders.end()) it->second->wake();
}

}  // namespace gpurent
