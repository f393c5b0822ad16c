// A PostgreSQL server for the store tests, and a fresh database per test. Test-only (header-only
// so that it stays out of the store library).
//
// PgTestCluster::shared() is, once per process:
//  * the server named by $GPURENT_TEST_PG_URL when it is set (its user must be allowed to CREATE
//    DATABASE). ctest sets it: the fixture test store_pg_cluster_start (tests/pg/pg_cluster.sh)
//    starts one cluster for the whole run, since ctest runs every test case as its own process;
//  * otherwise a private cluster started on first use: initdb -A trust in a temporary folder, a
//    free TCP port on 127.0.0.1 (found by binding port 0), the unix socket in the folder, fsync on.
//    initdb and postgres refuse to run as root, so as root they run as the `postgres` system user
//    (Debian's postgresql-common creates it), the folder owned by it. The cluster is stopped
//    (pg_ctl -m immediate) and the folder removed when the process exits.
// Missing PostgreSQL binaries are an error naming what to install, never a skipped test.
//
// PgTestDatabase: CREATE DATABASE under a unique name; DROP DATABASE ... WITH (FORCE) at scope
// exit. Database names are made of digits and underscores here: identifiers cannot be parameters.
//
// Thread-safety: shared() and the database calls may run from any thread (a mutex guards them).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "store/pg_db.h"

namespace gpurent {

class PgTestCluster {
 public:
  // The process's server, started on the first call; the same error on every call if it failed.
  static Result<PgTestCluster*> shared() {
    static std::mutex mu;
    static std::unique_ptr<PgTestCluster> cluster;
    static std::optional<Error> failed;
    std::lock_guard lock(mu);
    if (cluster) return cluster.get();
    if (failed) return *failed;
    if (const char* url = std::getenv("GPURENT_TEST_PG_URL"); url != nullptr && *url != '\0') {
      cluster = std::make_unique<PgTestCluster>(url);
      return cluster.get();
    }
    auto started = start_private();
    if (!started) {
      failed = started.error();
      return *failed;
    }
    cluster = std::move(started).value();
    return cluster.get();
  }

  explicit PgTestCluster(std::string admin_url) : admin_url_(std::move(admin_url)) {}
  PgTestCluster(const PgTestCluster&) = delete;
  PgTestCluster& operator=(const PgTestCluster&) = delete;
  ~PgTestCluster() {
    // Only the process that started the cluster stops it (not a forked child leaving normally).
    if (dir_.empty() || getpid() != owner_pid_) return;
    (void)run({bindir_ + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w", "stop"}, dir_ + "/pg_ctl.log");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Connection string of the maintenance database (CREATE/DROP DATABASE run there).
  const std::string& admin_url() const { return admin_url_; }

  // `url` with its database replaced by `dbname`, as a key=value string.
  static std::string with_dbname(const std::string& url, const std::string& dbname) {
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
    if (err != nullptr) PQfreemem(err);
    std::string out = "dbname=" + quote(dbname);
    if (opts == nullptr) return out;
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (o->val == nullptr || std::string_view(o->keyword) == "dbname") continue;
      out += std::string(" ") + o->keyword + "=" + quote(o->val);
    }
    PQconninfoFree(opts);
    return out;
  }

  Status create_database(const std::string& name) { return admin("CREATE DATABASE " + name, "creating " + name); }
  Status drop_database(const std::string& name) {
    return admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "dropping " + name);
  }
  // Lets `name`'s clients in again, or keeps them out and cuts off those connected: a database
  // outage as a server on it sees one, without stopping the cluster other tests share.
  Status allow_connections(const std::string& name, bool allow) {
    if (allow) return admin("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true", "opening " + name);
    return admin("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false; SELECT pg_terminate_backend(pid) FROM " +
                     "pg_stat_activity WHERE datname = '" + name + "' AND pid <> pg_backend_pid()",
                 "closing " + name);
  }

  // `url` with its database replaced by `dbname`, as a postgresql:// URL (what `gpurent --db`
  // takes): "postgresql:///DBNAME?host=...&port=...", every value percent-encoded.
  static std::string uri_with_dbname(const std::string& url, const std::string& dbname) {
    auto enc = [](const std::string& v) {
      static const char* hex = "0123456789ABCDEF";
      std::string out;
      for (unsigned char c : v) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
          out += static_cast<char>(c);
        } else {
          out += '%';
          out += hex[c >> 4];
          out += hex[c & 15];
        }
      }
      return out;
    };
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
    if (err != nullptr) PQfreemem(err);
    std::string out = "postgresql:///" + enc(dbname), sep = "?";
    if (opts == nullptr) return out;
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (o->val == nullptr || std::string_view(o->keyword) == "dbname") continue;
      out += sep + o->keyword + "=" + enc(o->val);
      sep = "&";
    }
    PQconninfoFree(opts);
    return out;
  }

  // Runs argv (argv[0] a path), as the cluster's system user when we are root, output appended to
  // `log`. Returns the exit status, or -1 if it could not run.
  int run(const std::vector<std::string>& argv, const std::string& log) const {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {  // child: only async-signal-safe calls from here on
      if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
      }
      const int in = open("/dev/null", O_RDONLY);
      if (in >= 0) dup2(in, 0);
      if (as_uid_ >= 0) {
        const gid_t gid = static_cast<gid_t>(as_gid_);
        if (setgroups(1, &gid) != 0 || setgid(gid) != 0 || setuid(static_cast<uid_t>(as_uid_)) != 0) _exit(126);
      }
      if (!dir_.empty() && chdir(dir_.c_str()) != 0) _exit(126);  // the user may not read our cwd
      execv(args[0], args.data());
      _exit(127);
    }
    if (out >= 0) close(out);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  static std::string quote(const std::string& v) {
    std::string out = "'";
    for (char c : v) {
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
    }
    return out + "'";
  }

  static std::string tail(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    return s.size() > 1500 ? "..." + s.substr(s.size() - 1500) : s;
  }

  // Where initdb and pg_ctl are: $GPURENT_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin.
  static std::optional<std::string> find_bindir() {
    auto usable = [](const std::string& bin) {
      return access((bin + "/initdb").c_str(), X_OK) == 0 && access((bin + "/pg_ctl").c_str(), X_OK) == 0;
    };
    if (const char* d = std::getenv("GPURENT_PG_BINDIR"); d != nullptr && *d != '\0')
      return usable(d) ? std::optional<std::string>(d) : std::nullopt;
    std::optional<std::string> best;
    int best_version = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string bin = (e.path() / "bin").string();
      int version = std::atoi(e.path().filename().c_str());
      if (usable(bin) && version > best_version) {
        best = bin;
        best_version = version;
      }
    }
    return best;
  }

  static int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = -1;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
    close(fd);
    return port;
  }

  static Result<std::unique_ptr<PgTestCluster>> start_private() {
    const auto t0 = std::chrono::steady_clock::now();
    auto bindir = find_bindir();
    if (!bindir) {
      return Error::make(Code::kUnavailable,
                         "PostgreSQL server binaries (initdb, pg_ctl) not found in $GPURENT_PG_BINDIR or "
                         "/usr/lib/postgresql/*/bin: install them (scripts/install-deps.sh installs postgresql-15) "
                         "or set GPURENT_TEST_PG_URL to a server the tests may create databases on");
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent_pg_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Error::make(Code::kInternal, "mkdtemp failed for the test cluster");
    auto c = std::make_unique<PgTestCluster>("");
    c->dir_ = tmpl;
    c->bindir_ = *bindir;
    c->owner_pid_ = getpid();
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (pw == nullptr)
        return Error::make(Code::kUnavailable,
                           "running as root, the test cluster needs the system user 'postgres' (initdb and postgres "
                           "refuse root); install postgresql-15 (scripts/install-deps.sh), which creates it");
      c->as_uid_ = static_cast<int>(pw->pw_uid);
      c->as_gid_ = static_cast<int>(pw->pw_gid);
      if (chown(c->dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        return Error::make(Code::kInternal, "cannot give " + c->dir_ + " to the postgres user");
    }
    const std::string data = c->dir_ + "/data", log = c->dir_ + "/setup.log";
    if (c->run({c->bindir_ + "/initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale",
                "--no-sync"},
               log) != 0)
      return Error::make(Code::kInternal, "initdb failed for the test cluster in " + data + ":\n" + tail(log));
    const int port = free_port();
    if (port <= 0) return Error::make(Code::kInternal, "no free TCP port for the test cluster");
    {
      std::ofstream conf(data + "/postgresql.conf", std::ios::app);
      conf << "\nlisten_addresses = '127.0.0.1'\nport = " << port << "\nunix_socket_directories = '" << c->dir_
           << "'\nfsync = on\nmax_connections = 200\n";
      if (!conf) return Error::make(Code::kInternal, "cannot write " + data + "/postgresql.conf");
    }
    if (c->run({c->bindir_ + "/pg_ctl", "-D", data, "-l", c->dir_ + "/server.log", "-w", "-t", "60", "start"}, log) !=
        0)
      return Error::make(Code::kInternal, "pg_ctl start failed for the test cluster:\n" + tail(log) + "\n" +
                                              tail(c->dir_ + "/server.log"));
    c->admin_url_ = "host=" + quote(c->dir_) + " port=" + std::to_string(port) + " user=postgres dbname=postgres";
    c->start_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "[pg test cluster] started in %lld ms at %s\n", static_cast<long long>(c->start_ms_),
                 c->dir_.c_str());
    return c;
  }

  Status admin(const std::string& sql, const std::string& what) {
    std::lock_guard lock(admin_mu_);
    auto conn = PgConn::connect(admin_url_, 10, /*read_only=*/false);
    if (!conn) return conn.error();
    return conn->script(sql, what);
  }

  std::string admin_url_;
  std::string dir_;  // the private cluster's folder; empty for $GPURENT_TEST_PG_URL
  std::string bindir_;
  pid_t owner_pid_ = 0;
  int as_uid_ = -1, as_gid_ = -1;  // the system user the binaries run as (-1: ourselves)
  int64_t start_ms_ = 0;
  std::mutex admin_mu_;
};

// A database of its own for one test, dropped at scope exit.
class PgTestDatabase {
 public:
  static Result<std::unique_ptr<PgTestDatabase>> create() {
    auto cluster = PgTestCluster::shared();
    if (!cluster) return cluster.error();
    static std::atomic<int> counter{0};
    static const unsigned salt = std::random_device{}() % 1000000;
    const std::string name =
        "gpurent_test_" + std::to_string(getpid()) + "_" + std::to_string(salt) + "_" + std::to_string(counter++);
    if (auto s = (*cluster)->create_database(name); !s) return s.error();
    return std::make_unique<PgTestDatabase>(*cluster, name);
  }
  PgTestDatabase(PgTestCluster* cluster, std::string name) : cluster_(cluster), name_(std::move(name)) {}
  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;
  ~PgTestDatabase() { (void)cluster_->drop_database(name_); }

  const std::string& name() const { return name_; }
  Status allow_connections(bool allow) { return cluster_->allow_connections(name_, allow); }
  std::string url() const { return PgTestCluster::with_dbname(cluster_->admin_url(), name_); }
  // The same database as a postgresql:// URL (the form `--db` and backup.h's functions take).
  std::string uri() const { return PgTestCluster::uri_with_dbname(cluster_->admin_url(), name_); }

 private:
  PgTestCluster* cluster_;
  std::string name_;
};

}  // namespace gpurent
