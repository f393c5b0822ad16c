#include "sched/score_policy.h"

#include <algorithm>
#include <cctype>

#include "sched/policy/policies.h"

namespace gpurent {

const std::vector<std::string>& score_policy_names() {
  static const std::vector<std::string> names{"random",  "dotprod", "gpuclustering", "gpupacking",
                                              "bestfit", "fgd",     "fgdpack",       "fgdauto"};
  return names;
}

Result<std::unique_ptr<ScorePolicy>> make_score_policy(std::string_view name, std::shared_ptr<FgdAutoMemo> memo) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "random") return make_random_policy();
  if (n == "dotprod") return make_dotprod_policy();
  if (n == "gpuclustering") return make_gpuclustering_policy();
  if (n == "gpupacking") return make_gpupacking_policy();
  if (n == "bestfit") return make_bestfit_policy();
  if (n == "fgd") return make_fgd_policy();
  if (n == "fgdpack") return make_fgdpack_policy();
  if (n == "fgdauto") return make_fgdauto_policy(std::move(memo));
  std::string known;
  for (const auto& k : score_policy_names()) known += (known.empty() ? "" : ", ") + k;
  return Error::invalid("policy", Message("sched.unknown_policy").arg("policy", std::string(name)).arg("known", known));
}

}  // namespace gpurent
