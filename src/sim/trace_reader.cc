#include "sim/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>

namespace gpurent {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') out.push_back(std::move(cur)), cur.clear();
    else if (c != '\r') cur += c;
  }
  out.push_back(std::move(cur));
  return out;
}

std::string csv_line_problem(std::string& line, bool header) {
  if (header && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  if (line.find('"') != std::string::npos) return "quoted fields are not read: write the CSV without quotes";
  return "";
}

namespace {

Error at(const std::string& source, int line, const std::string& column, const std::string& reason) {
  return Error::invalid(source + ":" + std::to_string(line) + (column.empty() ? "" : ": column " + column), reason);
}

// Reads the header and every row; `columns` must all be present. Calls row(cells, line).
class CsvTable {
 public:
  static Result<CsvTable> read(std::istream& in, const std::string& source, const std::vector<std::string>& columns,
                               const std::vector<std::string>& optional = {}) {
    CsvTable t;
    std::string line;
    if (!std::getline(in, line)) return at(source, 1, "", "empty file, expected a header line");
    if (auto why = csv_line_problem(line, true); !why.empty()) return at(source, 1, "", why);
    auto header = split_csv_line(line);
    for (const auto& c : columns) {
      auto it = std::find(header.begin(), header.end(), c);
      if (it == header.end()) return at(source, 1, c, "missing column in header");
      t.index_[c] = static_cast<int>(it - header.begin());
    }
    for (const auto& c : optional) {
      auto it = std::find(header.begin(), header.end(), c);
      if (it != header.end()) t.index_[c] = static_cast<int>(it - header.begin());
    }
    int no = 1;
    while (std::getline(in, line)) {
      ++no;
      if (line.empty() || line == "\r") continue;
      if (auto why = csv_line_problem(line, false); !why.empty()) return at(source, no, "", why);
      auto cells = split_csv_line(line);
      if (cells.size() != header.size())
        return at(source, no, "", "expected " + std::to_string(header.size()) + " fields, found " +
                                      std::to_string(cells.size()));
      t.rows_.push_back({no, std::move(cells)});
    }
    return t;
  }
  struct Row {
    int line;
    std::vector<std::string> cells;
  };
  const std::vector<Row>& rows() const { return rows_; }
  // An optional column absent from the header reads as "".
  const std::string& cell(const Row& r, const std::string& col) const {
    static const std::string kEmpty;
    auto it = index_.find(col);
    return it == index_.end() ? kEmpty : r.cells[it->second];
  }

 private:
  std::map<std::string, int> index_;
  std::vector<Row> rows_;
};

// Bounds far past any real cluster, so sums over a trace never overflow (times are bounded where
// they are replayed: alibaba_replay.cc).
constexpr int64_t kMaxCpuMilli = 1'000'000'000;  // a million cores
constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;

Status read_int(const std::string& s, int64_t lo, int64_t* out, const std::string& source, int line,
                const std::string& col, int64_t hi = INT64_MAX) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  if (ec != std::errc() || p != end) return at(source, line, col, "not an integer: \"" + s + "\"");
  if (*out < lo) return at(source, line, col, "must be >= " + std::to_string(lo) + ", got " + s);
  if (*out > hi) return at(source, line, col, "must be <= " + std::to_string(hi) + ", got " + s);
  return ok_status();
}

template <class T>
Result<std::vector<T>> open_and(const std::string& path,
                                Result<std::vector<T>> (*reader)(std::istream&, const std::string&)) {
  std::ifstream in(path);
  if (!in) return Error::make(Code::kNotFound, path + ": cannot open file");
  return reader(in, path);
}

}  // namespace

Result<std::vector<TraceNode>> read_trace_nodes(std::istream& in, const std::string& source) {
  auto t = CsvTable::read(in, source, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!t) return t.error();
  std::vector<TraceNode> out;
  for (const auto& r : t->rows()) {
    TraceNode n;
    n.name = t->cell(r, "sn");
    if (n.name.empty()) return at(source, r.line, "sn", "empty node name");
    int64_t gpus = 0;
    if (auto s = read_int(t->cell(r, "cpu_milli"), 0, &n.cpu_milli, source, r.line, "cpu_milli", kMaxCpuMilli); !s)
      return s.error();
    if (auto s = read_int(t->cell(r, "memory_mib"), 0, &n.memory_mib, source, r.line, "memory_mib", kMaxMemoryMib); !s)
      return s.error();
    if (auto s = read_int(t->cell(r, "gpu"), 0, &gpus, source, r.line, "gpu"); !s) return s.error();
    if (gpus > 64) return at(source, r.line, "gpu", "more than 64 GPUs on one node");
    n.gpus = static_cast<int>(gpus);
    n.model = t->cell(r, "model");
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::vector<TracePod>> read_trace_pods(std::istream& in, const std::string& source) {
  auto t = CsvTable::read(in, source, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
                          {"gpu_spec", "creation_time", "deletion_time"});
  if (!t) return t.error();
  std::vector<TracePod> out;
  for (const auto& r : t->rows()) {
    TracePod p;
    p.name = t->cell(r, "name");
    if (p.name.empty()) return at(source, r.line, "name", "empty pod name");
    int64_t k = 0, g = 0;
    if (auto s = read_int(t->cell(r, "cpu_milli"), 0, &p.pod.cpu_milli, source, r.line, "cpu_milli", kMaxCpuMilli); !s)
      return s.error();
    if (auto s = read_int(t->cell(r, "memory_mib"), 0, &p.pod.memory_mib, source, r.line, "memory_mib", kMaxMemoryMib);
        !s)
      return s.error();
    if (auto s = read_int(t->cell(r, "num_gpu"), 0, &k, source, r.line, "num_gpu"); !s) return s.error();
    if (auto s = read_int(t->cell(r, "gpu_milli"), INT64_MIN, &g, source, r.line, "gpu_milli"); !s) return s.error();
    if (k > 64) return at(source, r.line, "num_gpu", "more than 64 GPUs for one pod");
    for (auto [col, field] : {std::pair{"creation_time", &p.created_s}, std::pair{"deletion_time", &p.deleted_s}})
      if (const std::string& v = t->cell(r, col); !v.empty())
        if (auto s = read_int(v, 0, field, source, r.line, col); !s) return s.error();
    if (k > 0) {
      p.pod.num_gpu = static_cast<int32_t>(k);
      if (g < 1 || g > kGpuMilli)
        return at(source, r.line, "gpu_milli",
                  "a pod with num_gpu > 0 needs a share of 1 to 1000, got " + std::to_string(g));
      p.pod.gpu_milli = static_cast<int32_t>(g);
      p.pod.gpu_spec = t->cell(r, "gpu_spec");
      if (k > 1 && p.pod.gpu_milli > 0 && p.pod.gpu_milli < kGpuMilli)
        return at(source, r.line, "gpu_milli", "a pod with num_gpu > 1 must use whole GPUs (1000)");
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<TraceNode>> read_trace_nodes_file(const std::string& path) { return open_and(path, &read_trace_nodes); }
Result<std::vector<TracePod>> read_trace_pods_file(const std::string& path) { return open_and(path, &read_trace_pods); }

}  // namespace gpurent
