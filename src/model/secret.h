// Secret: a value a project's jobs receive in their containers (an API key, a registry password, a
// private key), as an environment variable or a read-only file (docs/resources/secrets.md).
// Written by the project's writers; the API never returns the value, only its name and size, and
// nothing the platform logs or shows (events, reasons, audit log) holds it. Stored in the
// database as it is: protect the database file as the admin token.
// Value types and pure functions; thread-safe.
#pragma once

#include <string>

#include "model/resource.h"

namespace gpurent {

inline constexpr size_t kMaxSecretBytes = 64 * 1024;

struct Secret {
  std::string name;        // slug, unique within the project
  std::string value;       // any UTF-8 text up to 64 KiB but NUL (line breaks kept: PEM keys)
  std::string project_id;  // set by the server
  std::string tenant_id;   // set by the server
};

// The PUT body {"value": "..."}; the name comes from the URL.
Result<Secret> parse_secret(const std::string& name, const json& body);
// A stored secret (the record's body); refuses what parse_secret would.
Result<Secret> decode_secret(const json& body);
json to_stored_json(const Secret& s);  // with the value: only for the store
// What the API shows: name, project_id, size_bytes; never the value.
json to_public_json(const Secret& s);
IndexCols index_of(const Secret& s);  // name "<project id>/<name>"

}  // namespace gpurent
