// Request bodies of every route family: "FAMILY\n" then the body's text. The text goes through
// the server's bounded JSON parser, then the family's validating parser (the same call the route
// makes). Property: no crash, no sanitizer report; the parsers answer a value or an error.
#include <string>
#include <string_view>

#include "advisor/demand.h"
#include "advisor/fingerprint.h"
#include "advisor/mix.h"
#include "advisor/poc.h"
#include "advisor/quotes.h"
#include "advisor/supplier_score.h"
#include "advisor/tco.h"
#include "billing/rating_input_parse.h"
#include "catalog/gpu_catalog.h"
#include "core/json_limits.h"
#include "fuzz_target.h"
#include "io/files.h"
#include "model/contract.h"
#include "model/job.h"
#include "model/measurement.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/project.h"
#include "model/reservation.h"
#include "model/supplier.h"
#include "model/tenant.h"
#include "model/user.h"

using namespace gpurent;

static const GpuCatalog& catalog() {
  static const GpuCatalog c = load_catalog_file(default_catalog_path()).value();
  return c;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos || nl > 24) return 0;
  const std::string_view family = in.substr(0, nl);
  auto body = parse_json_bounded(in.substr(nl + 1));
  if (!body) return 0;
  const json& b = *body;
  const Currency cny = Currency::kCNY;
  if (family == "supplier")
    (void)parse_supplier(b);
  else if (family == "node")
    (void)parse_node(b, catalog());
  else if (family == "offer")
    (void)parse_offer(b, catalog());
  else if (family == "tenant")
    (void)parse_tenant(b);
  else if (family == "project")
    (void)parse_project(b, cny);
  else if (family == "quota")
    (void)parse_quota(b, cny, "quota");
  else if (family == "user")
    (void)parse_user(b);
  else if (family == "token")
    (void)parse_token_request(b, 1'780'000'000'000);
  else if (family == "job")
    (void)parse_job(b, cny);
  else if (family == "contract")
    (void)parse_contract(b);
  else if (family == "measurement")
    (void)parse_measurement(b);
  else if (family == "reservation")
    (void)parse_reservation(b);
  else if (family == "rate")
    (void)parse_rating_input(b, catalog());
  else if (family == "mix")
    (void)parse_mix_input(b);
  else if (family == "tco")
    (void)parse_tco_input(b, catalog());
  else if (family == "poc")
    (void)parse_poc_input(b);
  else if (family == "fingerprint")
    (void)parse_fingerprint_input(b, catalog());
  else if (family == "quotes")
    (void)parse_quotes_input(b, catalog());
  else if (family == "suppliers")
    (void)parse_supplier_score_input(b);
  return 0;
}
