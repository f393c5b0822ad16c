// The mix optimizer's MILP, solved with GLPK (glp_intopt with its presolver, messages off).
//
// Variables (costs in currency units, as doubles: GLPK only chooses; mix.cc recomputes exactly):
//   y_j  integer, 0..max_units_j   reserved units of option j (unit = reservation_unit_gpus GPUs),
//                                  cost unit × billed hours × price
//   x_ki continuous, 0..ub         GPUs of on-demand/spot option i in each hour of demand level k,
//                                  cost hours_k × price_i (spot: the expected price with rework)
// Rows, per demand level k with d_k > 0:
//   cover_k:  Σ_j unit·y_j + Σ_i x_ki >= d_k
//   spot_k:   Σ_{i spot} x_ki <= floor(pct × d_k / 100)   (as column bounds when one spot option)
// ub = min(max_gpus_i, d_k), and for spot also the hour's spot cap. One row per distinct level is
// exact: hours with equal demand face the same choice once the reserved quantities are fixed. The
// x need no integrality: with y fixed, each level's rows form an interval matrix (totally
// unimodular), so GLPK's vertex solutions are whole GPUs, and mix.cc refills the hours exactly.
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include "advisor/mix.h"

namespace gpurent {
namespace {

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

double units_of(__int128 nanos) { return static_cast<double>(nanos) / 1e9; }

int spot_columns(const MixModel& m, int64_t spot_cap) {
  int n = 0;
  for (const MixModel::Hourly& h : m.hourly) n += h.spot && h.cap > 0 && spot_cap > 0;
  return n;
}

}  // namespace

int64_t mix_milp_rows(const MixModel& m) {
  int64_t rows = 0;
  for (const DemandLevel& l : m.levels)
    if (l.gpus > 0) rows += 1 + (spot_columns(m, m.spot_pct * l.gpus / 100) > 1);
  return rows;
}

int64_t mix_milp_nonzeros(const MixModel& m) {
  int64_t nonzeros = 0;
  for (const DemandLevel& l : m.levels) {
    if (l.gpus <= 0) continue;
    const int64_t spot_cap = m.spot_pct * l.gpus / 100;
    const bool spot_row = spot_columns(m, spot_cap) > 1;
    nonzeros += static_cast<int64_t>(m.reserved.size());
    for (const MixModel::Hourly& h : m.hourly) {
      int64_t ub = std::min(h.cap, l.gpus);
      if (h.spot) ub = std::min(ub, spot_cap);
      if (ub > 0) nonzeros += 1 + (h.spot && spot_row);
    }
  }
  return nonzeros;
}

Result<std::vector<int64_t>> solve_mix_milp(const MixInput& in, const MixModel& m, bool aggregate,
                                            int64_t time_limit_ms) {
  // Rows of demand: (GPUs, hours) per level, or one per hour when not aggregating.
  std::vector<DemandLevel> rows;
  if (aggregate) {
    for (const DemandLevel& l : m.levels)
      if (l.gpus > 0) rows.push_back(l);
  } else {
    for (int64_t g : in.demand.gpus)
      if (g > 0) rows.push_back({g, 1});
  }

  std::unique_ptr<glp_prob, ProbDeleter> lp(glp_create_prob());
  glp_prob* p = lp.get();
  glp_set_obj_dir(p, GLP_MIN);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};

  // Reserved units: one integer column per reserved option.
  const int first_y = 1;
  if (!m.reserved.empty()) glp_add_cols(p, static_cast<int>(m.reserved.size()));
  for (size_t j = 0; j < m.reserved.size(); ++j) {
    const int col = first_y + static_cast<int>(j);
    glp_set_col_kind(p, col, GLP_IV);
    const auto ub = static_cast<double>(m.reserved[j].max_units);
    glp_set_col_bnds(p, col, ub > 0 ? GLP_DB : GLP_FX, 0.0, ub);
    glp_set_obj_coef(p, col, units_of(m.reserved[j].unit_cost));
  }

  for (const DemandLevel& row : rows) {
    const int64_t spot_cap = m.spot_pct * row.gpus / 100;
    const int spot_cols = spot_columns(m, spot_cap);
    const int cover = glp_add_rows(p, 1);
    glp_set_row_bnds(p, cover, GLP_LO, static_cast<double>(row.gpus), 0.0);
    for (size_t j = 0; j < m.reserved.size(); ++j) {
      ia.push_back(cover), ja.push_back(first_y + static_cast<int>(j)), ar.push_back(static_cast<double>(m.unit));
    }
    const int spot_row = spot_cols > 1 ? glp_add_rows(p, 1) : 0;
    if (spot_row) glp_set_row_bnds(p, spot_row, GLP_UP, 0.0, static_cast<double>(spot_cap));
    for (const MixModel::Hourly& h : m.hourly) {
      int64_t ub = std::min(h.cap, row.gpus);
      if (h.spot) ub = std::min(ub, spot_cap);
      if (ub <= 0) continue;
      const int col = glp_add_cols(p, 1);
      glp_set_col_kind(p, col, GLP_CV);
      glp_set_col_bnds(p, col, GLP_DB, 0.0, static_cast<double>(ub));
      glp_set_obj_coef(p, col, units_of(h.cost * row.hours));
      ia.push_back(cover), ja.push_back(col), ar.push_back(1.0);
      if (h.spot && spot_row) ia.push_back(spot_row), ja.push_back(col), ar.push_back(1.0);
    }
  }
  if (glp_get_num_cols(p) == 0 || glp_get_num_rows(p) == 0)
    return std::vector<int64_t>(in.options.size(), 0);  // nothing to cover
  glp_load_matrix(p, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());

  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  // compute_mix keeps the MILP under kMaxMilpRows and kMaxMilpWork (about 2 s); a limit still
  // reached leaves the plan to the exact search.
  parm.tm_lim = static_cast<int>(std::clamp<int64_t>(time_limit_ms, 1, INT32_MAX));
  const int was_on = glp_term_out(GLP_OFF);
  const int rc = glp_intopt(p, &parm);
  glp_term_out(was_on);
  const int status = glp_mip_status(p);
  if (rc != 0 || status != GLP_OPT) {
    const char* why = rc == GLP_ETMLIM                           ? "hit its time limit"
                      : rc == GLP_ENOPFS || status == GLP_NOFEAS ? "found no feasible plan"
                                                                 : "failed";
    return Error::make(Code::kInternal, std::string("GLPK ") + why + " (glp_intopt " + std::to_string(rc) +
                                            ", status " + std::to_string(status) + ")");
  }
  std::vector<int64_t> gpus(in.options.size(), 0);
  for (size_t j = 0; j < m.reserved.size(); ++j)
    gpus[m.reserved[j].option] = std::llround(glp_mip_col_val(p, first_y + static_cast<int>(j))) * m.unit;
  return gpus;
}

}  // namespace gpurent
