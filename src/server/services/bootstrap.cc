#include "server/services/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/ids.h"
#include "server/services/principal.h"
#include "server/services/token_secret.h"

namespace gpurent {

Status write_secret_file(const std::string& path, const std::string& secret) {
  std::string tmp = path + ".tmp";
  // A fresh file of our own: a link or an older file (perhaps readable by others) left at the
  // temporary name is removed, never written through or reused with its mode.
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Error::make(Code::kInternal, "cannot write " + tmp + ": " + std::strerror(errno));
  std::string line = secret + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
    return Error::make(Code::kInternal, "cannot write " + path + ": " + std::strerror(errno));
  return ok_status();
}

static std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

Result<AdminCredentials> ensure_admin(StoreReader& store, ControlLoop& loop, const Clock& clock, const std::string& token_file) {
  AdminCredentials out;
  out.token_file = token_file;
  auto admins = store.list(ListQuery{"users", {{"name", "admin"}}, "", 1});
  if (!admins) return admins.error();
  if (!admins->items.empty()) {
    out.user_id = admins->items[0].id;
    std::string existing = read_first_line(token_file);
    if (!existing.empty()) {
      auto found = store.token_by_hash(token_hash(existing));
      if (!found) return found.error();
      const std::optional<TokenRow>& row = *found;
      if (row && !row->revoked && row->user_id == out.user_id) {
        out.token = existing;
        return out;
      }
    }
  }
  std::string secret = new_token_secret();
  // Several servers starting at once on an empty PostgreSQL database may all find no admin: the
  // first insert wins (names are unique) and the others, refused with kConflict, find its user on
  // the next attempt and mint a token for it.
  Status st = ok_status();
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string user_id = out.user_id;
    st = loop.run([&](StoreTx& tx) -> Status {
      TimeMs now = clock.now();
      if (user_id.empty()) {
        auto made = tx.list(ListQuery{"users", {{"name", "admin"}}, "", 1});
        if (!made) return made.error();
        if (!made->items.empty()) user_id = made->items[0].id;
      }
      if (user_id.empty()) {
        Record u;
        u.kind = "users";
        u.id = new_id("usr");
        u.name = "admin";
        u.created_at = u.updated_at = now;
        u.body = {{"name", "admin"}, {"display_name", "Platform operator"}, {"email", "admin@localhost.localdomain"},
                  {"role", "operator_admin"}};
        if (auto s = tx.insert(u); !s) return s;
        if (auto s = tx.append_audit({now, u.id, "create", "users", u.id, "bootstrap"}); !s) return s;
        user_id = u.id;
      }
      TokenRow t{new_id("tok"), user_id, "", "", "operator_admin", "bootstrap", token_hash(secret), now, 0, false};
      if (auto s = tx.insert_token(t); !s) return s;
      return tx.append_audit({now, user_id, "create", "tokens", t.id, "bootstrap"});
    });
    if (st) out.user_id = user_id;
    if (st || st.error().code != Code::kConflict) break;
  }
  if (!st) return st.error();
  if (auto s = write_secret_file(token_file, secret); !s) return s.error();
  out.token = secret;
  out.minted = true;
  return out;
}

}  // namespace gpurent
