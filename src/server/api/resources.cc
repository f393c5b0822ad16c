#include "server/api/resources.h"

#include <algorithm>

#include "core/ids.h"
#include "core/message.h"
#include "model/tenant.h"
#include "server/http/http_util.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<json> body_or_empty(const httplib::Request& req) {
  if (req.body.empty()) return json::object();
  return parse_body(req);
}

std::optional<Record> change_tenant_setting(App& app, const KindSpec& spec, const httplib::Request& req,
                                            httplib::Response& res, const Principal& p, const char* forbidden,
                                            const std::string& action, const TenantEdit& edit) {
  auto found = find_visible(app.store, spec, p, req.matches[1]);
  if (!found) return send_problem(res, found.error(), req.path), std::nullopt;
  if (!p.is_operator() && !(p.role == Role::kTenantAdmin && p.tenant_id == found->id))
    return send_problem(res, Error::make(Code::kForbidden, Message(forbidden).arg("role", role_name(p.role))), req.path),
           std::nullopt;
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path), std::nullopt;
  std::optional<Record> out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("tenants", found->id);
    if (!cur) return cur.error();
    auto t = decode_record(*cur, parse_tenant, "its " + action + " cannot be changed");
    if (!t) return t.error();
    auto detail = edit(tx, *t, *body);
    if (!detail) return detail.error();
    Record r = *cur;
    r.body = to_json(*t);
    if (auto s = store_change(tx, *cur, r, p, action, *detail, app.clock.now()); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path), std::nullopt;
  return out;
}

Status store_change(StoreTx& tx, const Record& cur, Record& r, const Principal& p, const std::string& action,
                    const std::string& detail, TimeMs now) {
  r.updated_at = now;
  if (auto s = tx.update(r); !s) return s;
  if (auto s = tx.append_audit({now, p.user_id, action, r.kind, r.id, detail}); !s) return s;
  r.version = cur.version + 1;
  return ok_status();
}

json present(const Record& r) {
  json out = json::object();
  out["id"] = r.id;
  for (auto it = r.body.begin(); it != r.body.end(); ++it) out[it.key()] = it.value();
  out["created_at"] = format_rfc3339(r.created_at);
  out["updated_at"] = format_rfc3339(r.updated_at);
  out["version"] = r.version;
  return out;
}

Error not_found_error(const std::string& kind, const std::string& ref) {
  return Error::make(Code::kNotFound, Message("api.resources.not_found").arg("kind", kind).arg("ref", ref));
}

Result<Record> path_project(App& app, const httplib::Request& req, const Principal& p, bool write, ObjectKind writers,
                            const char* forbidden) {
  auto project = find_visible(app.store, app.kinds.at("projects"), p, req.matches[1]);
  if (!project) return project.error();
  if (write && !in_scope(write_scope(p, writers), p, *project))
    return Error::make(Code::kForbidden, Message(forbidden).arg("role", role_name(p.role)));
  return project;
}

Error error_with_field(Code c, Message detail, std::string field, Message reason) {
  Error e = Error::make(c, std::move(detail));
  std::string text = render_en(reason);
  e.fields.push_back({std::move(field), std::move(text), std::move(reason)});
  return e;
}

static Error not_found(const std::string& kind, const std::string& ref) { return not_found_error(kind, ref); }

// Narrows a list query to what scope s lets p see; false when nothing is visible. A filter the
// caller gave on the scope's column (?tenant=) that names something else matches nothing: it must
// not be replaced by the caller's own scope, which would answer a different question.
static bool narrow_to(ListQuery& q, const std::string& col, const std::string& own) {
  auto it = q.eq.find(col);
  if (it != q.eq.end() && it->second != own) return false;
  q.eq[col] = own;
  return !own.empty();
}

static bool narrow(ListQuery& q, Scope s, const Principal& p) {
  switch (s) {
    case Scope::kAll: return true;
    case Scope::kOwnTenant: return narrow_to(q, "tenant_id", p.tenant_id);
    case Scope::kOwnSupplier: return narrow_to(q, "supplier_id", p.supplier_id);
    case Scope::kSelf:
    case Scope::kNone: return false;
  }
  return false;
}

Result<Record> find_visible(StoreReader& store, const KindSpec& spec, const Principal& p, const std::string& ref) {
  Scope s = read_scope(p, spec.object_kind);
  if (looks_like_id(ref)) {
    auto r = store.get(spec.kind, ref);
    if (!r) return r.error().code == Code::kNotFound ? not_found(spec.kind, ref) : r.error();
    if (!in_scope(s, p, *r)) return not_found(spec.kind, ref);
    return r;
  }
  ListQuery q{spec.kind, {{"name", ref}}, "", 3};
  if (s == Scope::kSelf) {
    auto me = store.get(spec.kind, p.user_id);
    if (me && me->name == ref) return me;
    return not_found(spec.kind, ref);
  }
  if (!narrow(q, s, p)) return not_found(spec.kind, ref);
  auto page = store.list(q);
  if (!page) return page.error();
  if (page->items.empty()) return not_found(spec.kind, ref);
  if (page->items.size() > 1)
    return Error::make(Code::kConflict,
                       Message("api.resources.ambiguous_name").arg("name", ref).arg("kind", spec.kind));
  return page->items[0];
}

static void fill_index(Record& r, const IndexCols& idx, const KindSpec& spec) {
  r.name = idx.name;
  r.tenant_id = spec.self_tenant ? r.id : idx.tenant_id;
  r.supplier_id = spec.self_supplier ? r.id : idx.supplier_id;
  r.project_id = idx.project_id;
  r.state = idx.state;
  r.region = idx.region;
  r.gpu_model = idx.gpu_model;
}

// 409 naming "name" when another object of the kind already has r's name (kinds whose names are
// global; other kinds rely on the store's per-scope unique index).
static Status check_global_name(StoreTx& tx, const KindSpec& spec, const Record& r) {
  if (!spec.global_names) return ok_status();
  // The store's unique index is per scope, and a tenant's or supplier's scope is itself: the names
  // of a kind are checked one writer at a time (several servers on one database).
  if (auto l = take_write_lock(tx, "names-" + spec.kind, "the global names of " + spec.kind); !l) return l;
  auto page = tx.list(ListQuery{spec.kind, {{"name", r.name}}, "", 2});
  if (!page) return page.error();
  for (const auto& other : page->items)
    if (other.id != r.id)
      return error_with_field(
          Code::kConflict,
          field_detail("name", Message("api.resources.name_exists_among").arg("name", r.name).arg("kind", spec.kind)),
          "name", Message("api.resources.name_exists").arg("name", r.name));
  return ok_status();
}

Status hold_parent(StoreTx& tx, const char* kind, const std::string& id, bool must_exist) {
  if (id.empty()) return ok_status();
  auto p = tx.get_shared(kind, id);
  if (p || (p.error().code == Code::kNotFound && !must_exist)) return ok_status();
  if (p.error().code != Code::kNotFound) return p.error();
  return Error::make(Code::kConflict, Message("api.resources.parent_gone").arg("kind", kind).arg("id", id));
}

Status check_tenant_room(StoreTx& tx, const std::string& kind, const std::string& tenant_id, int64_t max,
                         const std::string& field, const char* code) {
  if (tenant_id.empty()) return ok_status();
  // The tenant first, as every write that holds it takes it (an instance's start holds it while it
  // makes its data disk): no two writes wait for each other in a cycle.
  if (auto h = hold_parent(tx, "tenants", tenant_id, true); !h) return h;
  if (auto l = take_write_lock(tx, kind + "-of-" + tenant_id, "the " + kind + " of " + tenant_id); !l) return l;
  auto held = tx.count(kind, {{"tenant_id", tenant_id}});
  if (!held) return held.error();
  if (*held < max) return ok_status();
  auto tenant = tx.get("tenants", tenant_id);
  return Error::invalid(field,
                        Message(code).arg("tenant", tenant ? tenant->name : tenant_id).arg("max", std::to_string(max)));
}

// hold_parent for each row r belongs to — its supplier, tenant and project, in that order, the
// order every write takes them in (no two writes wait for each other in a cycle). A tenant's or
// supplier's own id column is not a parent.
static Status hold_parents(StoreTx& tx, const KindSpec& spec, const Record& r, bool must_exist) {
  if (!spec.self_supplier)
    if (auto s = hold_parent(tx, "suppliers", r.supplier_id, must_exist); !s) return s;
  if (!spec.self_tenant)
    if (auto s = hold_parent(tx, "tenants", r.tenant_id, must_exist); !s) return s;
  if (r.project_id != r.id) return hold_parent(tx, "projects", r.project_id, must_exist);
  return ok_status();
}

enum class WriteOp { kCreate, kChange, kDelete };

static Message out_of_scope(WriteOp op) {
  switch (op) {
    case WriteOp::kCreate:
      return Message("api.resources.out_of_scope_create");
    case WriteOp::kChange:
      return Message("api.resources.out_of_scope_change");
    case WriteOp::kDelete:
      return Message("api.resources.out_of_scope_delete");
  }
  return Message("api.resources.out_of_scope_change");
}

static Status check_write(const KindSpec& spec, const Principal& p, const Record& r, WriteOp op) {
  if (in_scope(write_scope(p, spec.object_kind), p, r)) return ok_status();
  return Error::make(Code::kForbidden, out_of_scope(op)
                                           .arg("role", role_name(p.role))
                                           .arg("kind", spec.kind)
                                           .arg("name", r.name.empty() ? r.id : r.name));
}

static Error may_not_create(const KindSpec& spec, const Principal& p) {
  return Error::make(Code::kForbidden,
                     Message("api.resources.may_not_create").arg("role", role_name(p.role)).arg("kind", spec.kind));
}

Result<Record> create_in(App& app, const KindSpec& spec, const json& body, const Principal& p, StoreTx& tx,
                         bool by_server, const std::any* prepared) {
  if (write_scope(p, spec.object_kind) == Scope::kNone) return may_not_create(spec, p);
  static const std::any kNothing;
  auto b = by_server && spec.build_by_server ? spec.build_by_server(body, p, tx, nullptr)
           : spec.build_create               ? spec.build_create(body, p, tx, prepared ? *prepared : kNothing)
                                             : spec.build(body, p, tx, nullptr);
  if (!b) return b.error();
  Record r;
  r.kind = spec.kind;
  r.id = new_id(spec.id_prefix.c_str());
  fill_index(r, b->idx, spec);
  if (auto a = check_write(spec, p, r, WriteOp::kCreate); !a) return a.error();
  if (auto s = hold_parents(tx, spec, r, true); !s) return s.error();
  if (auto s = check_global_name(tx, spec, r); !s) return s.error();
  r.created_at = r.updated_at = app.clock.now();
  r.body = std::move(b->body);
  if (auto s = tx.insert(r); !s) return s.error();
  if (spec.after_create)
    if (auto s = spec.after_create(p, r, tx); !s) return s.error();
  if (auto s = tx.append_audit({r.created_at, p.user_id, "create", spec.kind, r.id, r.name}); !s) return s.error();
  r.version = 1;
  return r;
}

Result<Record> create_object(App& app, const KindSpec& spec, const json& body, const Principal& p) {
  if (write_scope(p, spec.object_kind) == Scope::kNone) return may_not_create(spec, p);
  std::any prepared;
  if (spec.prepare_create) {
    auto pre = spec.prepare_create(body, p);
    if (!pre) return pre.error();
    prepared = std::move(*pre);
  }
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto r = create_in(app, spec, body, p, tx, false, &prepared);
    if (!r) return r.error();
    out = std::move(*r);
    return ok_status();
  });
  if (!st) return st.error();
  app.metrics.count_write(spec.kind, "create");
  return out;
}

Status check_one_of(const std::string& param, const std::string& v, const std::vector<std::string>& allowed) {
  std::string choices;
  for (const auto& c : allowed) {
    if (c == v) return ok_status();
    choices += (choices.empty() ? "" : ", ") + c;
  }
  return Error::invalid(param, Message("field.unknown_value").arg("value", v).arg("choices", choices));
}

// A fixed-set filter's value must be one of its values.
static Status check_filter_value(const KindSpec& spec, const std::string& param, const std::string& v) {
  auto it = spec.filter_values.find(param);
  return it == spec.filter_values.end() ? ok_status() : check_one_of(param, v, it->second);
}

Result<std::string> resolve_filter_ref(App& app, const Principal& p, const std::string& param,
                                       const std::string& kind, const std::string& ref) {
  auto found = find_visible(app.store, app.kinds.at(kind), p, ref);
  if (found) return found->id;
  Error e = found.error();
  if (e.code == Code::kNotFound) {
    Message why = Message("api.params.ref_not_found").arg("ref", ref).arg("kind", kind);
    e.fields.push_back({param, render_en(why), why});
  } else if (e.code == Code::kConflict) {
    e.fields.push_back({param, e.message, e.detail});
  }
  return e;
}

// A create or update body; "warnings" (answered beside a written object, never stored) is dropped
// like the other server-set keys, so an answer can be sent back as it came.
static Result<json> parse_written_body(const httplib::Request& req) {
  auto body = parse_body(req);
  if (body && body->is_object()) body->erase("warnings");
  return body;
}

// The stored object as answered to a write, with the spec's warnings about it.
static json with_warnings(App& app, const KindSpec& spec, const Record& r, const Principal& p) {
  json out = present(r);
  if (spec.decorate) spec.decorate(app.store, r, p, out);
  if (!spec.warnings) return out;
  for (const Message& m : spec.warnings(app.store, r)) {
    json w = json::object();
    put_message(w, "text", m);
    out["warnings"].push_back(std::move(w));
  }
  return out;
}

// About how many bytes `j` takes written out as JSON (strings and keys by their length, numbers
// and the rest by a few bytes, no escaping): cheaper than writing it, close enough for a budget.
static size_t json_size_estimate(const json& j) {
  switch (j.type()) {
    case json::value_t::string:
      return j.get_ref<const std::string&>().size() + 2;
    case json::value_t::object: {
      size_t n = 2;
      for (auto it = j.begin(); it != j.end(); ++it) n += it.key().size() + 4 + json_size_estimate(it.value());
      return n;
    }
    case json::value_t::array: {
      size_t n = 2;
      for (const json& v : j) n += json_size_estimate(v) + 1;
      return n;
    }
    default:
      return 8;
  }
}

// A list page holds at most `limit` items and at most about kListPageBytes of them: past that the
// page ends early and next_after says where to go on. Records may be large (an acceptance run
// keeps its stages' raw output, a job up to 64 KiB of env and of command), and a page of 1000 of
// them would be gigabytes in the server's memory, several requests at once more. The store is read
// in chunks of at most 100 (a page of up to 100 is one read, as before the budget), fewer when that
// many of the heaviest item so far would pass the budget, so one read holds at most 100 records
// whatever their size.
constexpr size_t kListPageBytes = size_t{8} << 20;

static void list_handler(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                         const Principal& p) {
  auto pp = page_params(req);
  if (!pp) return send_problem(res, pp.error(), req.path);
  for (const auto& [k, v] : req.params) {
    if (k != "limit" && k != "after" && !spec.filters.count(k) && !(spec.updated_since && k == "updated_since")) {
      std::string allowed = "limit, after";
      for (const auto& f : spec.filters) allowed += ", " + f.first;
      if (spec.updated_since) allowed += ", updated_since";
      return send_problem(res, Error::invalid(k, Message("api.params.unknown").arg("allowed", allowed)), req.path);
    }
    if (req.params.count(k) > 1)  // ?limit=1&limit=1000: which one was meant is not known
      return send_problem(res, Error::invalid(k, Message("api.params.repeated")), req.path);
  }
  Scope s = read_scope(p, spec.object_kind);
  json items = json::array();
  json out = {{"items", items}, {"next_after", nullptr}};
  if (s == Scope::kNone)
    return send_problem(
        res,
        Error::make(Code::kForbidden,
                    Message("api.resources.may_not_list").arg("role", role_name(p.role)).arg("kind", spec.kind)),
        req.path);
  if (s == Scope::kSelf) {  // only one's own object
    auto me = app.store.get(spec.kind, p.user_id);
    if (me) out["items"].push_back(present(*me));
    return send_json(res, 200, out);
  }
  ListQuery q{spec.kind, {}, pp->after, pp->limit};
  if (spec.updated_since && req.has_param("updated_since")) {
    auto since = parse_rfc3339(req.get_param_value("updated_since"), "updated_since");
    if (!since) return send_problem(res, since.error(), req.path);
    q.updated_since = std::max<TimeMs>(1, *since);
  }
  for (const auto& [param, col] : spec.filters) {
    if (!req.has_param(param)) continue;
    std::string v = req.get_param_value(param);
    if (auto e = check_filter_value(spec, param, v); !e) return send_problem(res, e.error(), req.path);
    // Reference filters accept names as well as ids; one that names nothing visible is a 404.
    const char* ref_kind = col == "supplier_id" ? "suppliers"
                           : col == "tenant_id" ? "tenants"
                           : col == "project_id" ? "projects"
                                                 : nullptr;
    if (ref_kind) {
      auto id = resolve_filter_ref(app, p, param, ref_kind, v);
      if (!id) return send_problem(res, id.error(), req.path);
      v = *id;
    } else if (col == "gpu_model") {
      if (const GpuModel* m = app.catalog.find(v)) v = m->id;
    }
    q.eq[col] = v;
  }
  if (!narrow(q, s, p)) return send_json(res, 200, out);
  int left = pp->limit;
  size_t bytes = 0, heaviest = 1;
  std::string last;  // the id of the last item in the page
  for (;;) {
    // The first read takes up to 100; later ones as many as the budget left holds at the heaviest
    // item's size so far, at least one (a page always moves on) and at most 100: small items first
    // say nothing of the size of those after them, and a read holds all it returns.
    const size_t room = bytes < kListPageBytes ? (kListPageBytes - bytes) / heaviest : 0;
    q.limit = static_cast<int>(
        std::clamp<size_t>(bytes == 0 ? 100 : std::min<size_t>(room, 100), 1, static_cast<size_t>(left)));
    auto page = app.store.list(q);
    if (!page) return send_problem(res, page.error(), req.path);
    for (const auto& r : page->items) {
      json item = present(r);
      if (spec.decorate) spec.decorate(app.store, r, p, item);
      const size_t size = json_size_estimate(item);
      heaviest = std::max(heaviest, size);
      bytes += size;
      out["items"].push_back(std::move(item));
      last = r.id;
      --left;
      if (bytes >= kListPageBytes && left > 0 && (&r != &page->items.back() || !page->next_after.empty())) {
        out["next_after"] = last;  // cut short by size: more may follow
        return send_json(res, 200, out);
      }
    }
    if (page->next_after.empty()) break;  // the store has no more
    if (left == 0) {
      out["next_after"] = page->next_after;
      break;
    }
    q.after_id = page->next_after;
  }
  send_json(res, 200, out);
}

static void update_handler(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                           const Principal& p) {
  auto existing = find_visible(app.store, spec, p, req.matches[1]);
  if (!existing) return send_problem(res, existing.error(), req.path);
  if (auto a = check_write(spec, p, *existing, WriteOp::kChange); !a) return send_problem(res, a.error(), req.path);
  auto body = parse_written_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  std::optional<int64_t> want_version;
  if (body->contains("version")) {
    if (!(*body)["version"].is_number_integer())
      return send_problem(res, Error::invalid("version", Message("field.integer")), req.path);
    want_version = (*body)["version"].get<int64_t>();
  }
  std::any prepared;
  if (spec.prepare_update) {
    auto pre = spec.prepare_update(*body, p, *existing);
    if (!pre) return send_problem(res, pre.error(), req.path);
    prepared = std::move(*pre);
  }
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get(spec.kind, existing->id);
    if (!cur) return cur.error();
    // Re-checked on the state the write commits against (the check above read outside it).
    if (auto a = check_write(spec, p, *cur, WriteOp::kChange); !a) return a;
    if (want_version && *want_version != cur->version)
      return Error::make(Code::kConflict, Message("api.resources.stale_version")
                                              .arg("version", std::to_string(*want_version))
                                              .arg("current", std::to_string(cur->version)));
    auto b = spec.build_update ? spec.build_update(*body, p, tx, *cur, prepared) : spec.build(*body, p, tx, &*cur);
    if (!b) return b.error();
    Record r = *cur;
    fill_index(r, b->idx, spec);
    if (auto a = check_write(spec, p, r, WriteOp::kChange); !a) return a;
    if (auto s = hold_parents(tx, spec, r, false); !s) return s;
    if (auto s = check_global_name(tx, spec, r); !s) return s;
    r.updated_at = app.clock.now();
    r.body = std::move(b->body);
    if (auto s = tx.update(r); !s) return s;
    if (auto s = tx.append_audit({r.updated_at, p.user_id, "update", spec.kind, r.id, r.name}); !s) return s;
    r.version = cur->version + 1;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write(spec.kind, "update");
  send_json(res, 200, with_warnings(app, spec, out, p));
}

static void delete_handler(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                           const Principal& p) {
  auto existing = find_visible(app.store, spec, p, req.matches[1]);
  if (!existing) return send_problem(res, existing.error(), req.path);
  if (auto a = check_write(spec, p, *existing, WriteOp::kDelete); !a) return send_problem(res, a.error(), req.path);
  Record removed;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get(spec.kind, existing->id);
    if (!cur) return cur.error();
    // Its parents held, then the record locked before on_delete counts what is in it: a write
    // creating something in it (which holds it shared) has committed or waits for this one. A
    // kind that is changed, not removed (an instance released), has nothing written into it and
    // keeps the order its other writes take (its job first): its version check guards it.
    if (auto s = hold_parents(tx, spec, *cur, false); !s) return s;
    if (!spec.soft_delete) cur = tx.get_locked(spec.kind, existing->id);
    if (!cur) return cur.error();
    if (auto a = check_write(spec, p, *cur, WriteOp::kDelete); !a) return a;
    if (spec.on_delete)
      if (auto s = spec.on_delete(p, *cur, tx); !s) return s;
    if (spec.soft_delete) {
      Record r = *cur;
      if (auto s = spec.soft_delete(p, r, tx); !s) return s;
      r.updated_at = app.clock.now();
      if (auto s = tx.update(r); !s) return s;
    } else {
      if (auto s = tx.remove(spec.kind, cur->id); !s) return s;
      removed = *cur;
    }
    return tx.append_audit({app.clock.now(), p.user_id, "delete", spec.kind, cur->id, cur->name});
  });
  if (!st) return send_problem(res, st.error(), req.path);
  if (spec.after_delete && !spec.soft_delete) spec.after_delete(removed);
  app.metrics.count_write(spec.kind, "delete");
  res.status = 204;
}

static void not_allowed(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& name,
                        const Message& why, const std::string& allow) {
  route(app, srv, method, pattern, name,
        [why, allow](const httplib::Request& req, httplib::Response& res, const Principal&) {
          send_problem(res, Error::make(Code::kMethodNotAllowed, why), req.path);
          res.set_header("Allow", allow);
        });
}

void item_route(App& app, Router& srv, const char* method, const std::string& kind, const std::string& action,
                ItemHandler h) {
  const KindSpec* sp = &app.kinds.at(kind);  // stable: std::map nodes do not move
  route(app, srv, method, "/api/v1/" + kind + "/([^/]+)/" + action, "/api/v1/" + kind + "/{id}/" + action,
        [&app, sp, h](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          h(app, *sp, req, res, p);
        });
}

void register_crud(App& app, Router& srv, const KindSpec& spec) {
  app.kinds[spec.kind] = spec;
  const std::string base = "/api/v1/" + spec.kind;
  const std::string item = base + "/([^/]+)";
  const KindSpec* sp = &app.kinds[spec.kind];  // stable: std::map nodes do not move
  route(app, srv, "GET", base, base,
        [&app, sp](const auto& req, auto& res, const Principal& p) { list_handler(app, *sp, req, res, p); });
  route(app, srv, "GET", item, base + "/{id}", [&app, sp](const auto& req, auto& res, const Principal& p) {
    auto r = find_visible(app.store, *sp, p, req.matches[1]);
    if (!r) return send_problem(res, r.error(), req.path);
    json out = present(*r);
    if (sp->decorate) sp->decorate(app.store, *r, p, out);
    send_json(res, 200, out);
  });
  if (spec.creatable) {
    route(app, srv, "POST", base, base, [&app, sp](const auto& req, auto& res, const Principal& p) {
      if (write_scope(p, sp->object_kind) == Scope::kNone) return send_problem(res, may_not_create(*sp, p), req.path);
      auto body = parse_written_body(req);
      if (!body) return send_problem(res, body.error(), req.path);
      auto out = create_object(app, *sp, *body, p);
      if (!out) return send_problem(res, out.error(), req.path);
      res.set_header("Location", "/api/v1/" + sp->kind + "/" + out->id);
      send_json(res, 201, with_warnings(app, *sp, *out, p));
    });
  }
  if (!spec.creatable && !spec.create_elsewhere)
    not_allowed(app, srv, "POST", base, base, Message("api.resources.not_creatable").arg("kind", spec.kind), "GET");
  std::string allow = "GET";
  if (spec.updatable) allow += ", PUT";
  if (spec.deletable) allow += ", DELETE";
  // PUT and DELETE on one object: the handler, or a 405 naming what the kind allows.
  using Handler = void (*)(App&, const KindSpec&, const httplib::Request&, httplib::Response&, const Principal&);
  auto item_verb = [&](const char* method, bool served, Handler handler, const char* refusal) {
    if (served)
      route(app, srv, method, item, base + "/{id}",
            [&app, sp, handler](const auto& req, auto& res, const Principal& p) { handler(app, *sp, req, res, p); });
    else
      not_allowed(app, srv, method, item, base + "/{id}", Message(refusal).arg("kind", spec.kind), allow);
  };
  item_verb("PUT", spec.updatable, update_handler, "api.resources.not_updatable");
  item_verb("DELETE", spec.deletable, delete_handler, "api.resources.not_deletable");
}

}  // namespace gpurent
