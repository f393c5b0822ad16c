// Test helper (header-only, used by artifact_commands_test.cc and image_commands_test.cc): the
// server's side of the chunked upload (server/api/uploads.h) as the CLI's tests need it, for a
// FakeApi route answered with on_call. FakeUpload keeps one record's upload and checks what the
// protocol asks of the server: application/octet-stream bodies of 1 byte to 1 MiB at ?offset=
// equal to what it holds (409 otherwise), nothing past the declared size (422), and at the last
// byte the SHA-256 of everything received against the declared one (422 and back to 0 otherwise).
// The test's own record type wraps it with its answer (artifact, image). Not thread-safe: the
// FakeApi calls it under its lock. UploadFileTest is the tests' fixture: the file to upload and
// the fake's routes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/fake_api_for_test.h"
#include "core/ids.h"

namespace gpurent::testing {

inline constexpr int64_t kUploadMiB = 1024 * 1024;

// An RFC 9457 problem answer; `field` adds an errors[] entry.
inline Canned problem(int status, const std::string& detail, const std::string& field = "") {
  nlohmann::json p = {
      {"title", status == 409 ? "Conflict" : "Unprocessable Entity"}, {"status", status}, {"detail", detail}};
  if (!field.empty()) p["errors"] = nlohmann::json::array({{{"field", field}, {"reason", detail}}});
  return {status, p.dump(), "application/problem+json"};
}

// n bytes (2.5 MiB and a few by default) that differ from chunk to chunk: a chunk sent twice or
// out of order changes the digest.
inline std::string upload_bytes(size_t n = 5 * kUploadMiB / 2 + 123) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 4099) & 0xff);
  return s;
}

// "METHOD /path", and "?offset=N (bytes)" for a chunk, per request.
inline std::vector<std::string> upload_calls(const std::vector<Recorded>& requests) {
  std::vector<std::string> out;
  for (const auto& r : requests) {
    std::string s = r.method + " " + r.path;
    if (auto it = r.params.find("offset"); it != r.params.end())
      s += "?offset=" + it->second + " (" + std::to_string(r.body.size()) + ")";
    out.push_back(s);
  }
  return out;
}

struct FakeUpload {
  bool exists = false;
  std::string sha256;
  int64_t size = 0;
  std::string received;
  bool ready = false;
  std::string preload_on_first_put;  // as if an earlier answer was lost: the server already holds these bytes
  bool corrupt = false;              // flips the first byte it receives (the digest will not match)
  int puts = 0;

  // A create whose declared part (sha256, size_bytes) is `declared`: 409 with `taken` when the
  // record exists; nullopt when it was created.
  std::optional<Canned> create(const nlohmann::json& declared, const std::string& taken) {
    if (exists) return problem(409, taken, "name");
    exists = true;
    sha256 = declared.at("sha256").get<std::string>();
    size = declared.at("size_bytes").get<int64_t>();
    return std::nullopt;
  }

  // A chunk: the error to answer, or nullopt when it was taken (the caller answers the record).
  std::optional<Canned> put(const Recorded& r) {
    if (++puts == 1 && !preload_on_first_put.empty()) received = preload_on_first_put;
    if (!exists) return Canned{404, R"({"title":"Not found","status":404,"detail":"no such upload"})"};
    if (r.content_type != "application/octet-stream") return problem(415, "send application/octet-stream");
    if (ready) return problem(409, "the upload is complete: its content cannot change");
    auto it = r.params.find("offset");
    if (it == r.params.end() || it->second != std::to_string(received.size()))
      return problem(409, "offset: the upload continues at " + std::to_string(received.size()), "offset");
    if (r.body.empty() || r.body.size() > static_cast<size_t>(kUploadMiB)) return problem(413, "1 byte to 1 MiB");
    if (static_cast<int64_t>(received.size() + r.body.size()) > size)
      return problem(422, "offset+length exceeds size_bytes", "offset");
    std::string chunk = r.body;
    if (corrupt && received.empty()) chunk[0] = static_cast<char>(chunk[0] ^ 1);
    received += chunk;
    if (static_cast<int64_t>(received.size()) == size) {
      if (sha256_hex(received) != sha256) {
        received.clear();
        return problem(422, "sha256: the content received does not have this digest", "sha256");
      }
      ready = true;
    }
    return std::nullopt;
  }
};

// A test of an upload command: upload_bytes() in a file of the test's temp folder named after the
// test (<stem><test name><ext>), removed after it, and a stateful fake of the record behind its routes.
class UploadFileTest : public CliFakeApiTest {
 protected:
  UploadFileTest(std::string stem, std::string ext) : stem_(std::move(stem)), ext_(std::move(ext)) {}

  void SetUp() override {
    CliFakeApiTest::SetUp();
    file_ = ::testing::TempDir() + stem_ + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ext_;
    content_ = upload_bytes();
    std::ofstream(file_, std::ios::binary) << content_;
  }
  void TearDown() override { std::remove(file_.c_str()); }

  // Answers the record's create (POST `collection`), its reads (GET each of `records`: 404 until it
  // is created) and its chunks (PUT `content`) from `fake`, a FakeUpload with create(request) and
  // answer() (the record as the server shows it).
  template <class Fake>
  void route_upload(const std::shared_ptr<Fake>& fake, const std::string& collection,
                    const std::vector<std::string>& records, const std::string& content) {
    api_.on_call("POST " + collection, [fake](const Recorded& r) { return fake->create(r); });
    for (const std::string& path : records)
      api_.on_call("GET " + path, [fake](const Recorded&) {
        return fake->exists ? Canned{200, fake->answer().dump()}
                            : Canned{404, R"({"status":404,"detail":"no such record"})"};
      });
    api_.on_call("PUT " + content, [fake](const Recorded& r) {
      if (auto refused = fake->FakeUpload::put(r)) return *refused;
      return Canned{200, fake->answer().dump()};
    });
  }

  // "METHOD /path?offset=N (bytes)" per request.
  std::vector<std::string> calls() const { return upload_calls(api_.requests()); }

  std::string file_, content_;

 private:
  std::string stem_, ext_;
};

}  // namespace gpurent::testing
