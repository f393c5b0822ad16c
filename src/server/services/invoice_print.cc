// The printable invoice: one HTML page per issued invoice that prints to A4 (CSS @page), its
// labels from the message catalogue (invoice_print.*) in English or Chinese, every line as
// issued, the credit notes against it, the balance due and the content hash to check it by.
#include <algorithm>
#include <map>
#include <string>

#include "core/message.h"
#include "core/money.h"
#include "server/services/issued_invoices.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string str(const json& j, const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; }

// A line's description in `lang`: in English the text as issued (and hashed); in another language
// rendered from its message by the current catalogue (a line issued before lines carried one: its
// English text).
std::string line_description(const json& l, const std::string& lang) {
  if (auto it = l.find("description_message"); lang != "en" && it != l.end())
    if (auto m = message_from_json(*it)) return render(*m, lang);
  return str(l, "description");
}

}  // namespace

std::string invoice_html(const json& inv, const std::vector<json>& credit_notes, const std::string& lang) {
  auto t = [&](const char* code) { return esc(render(Message(code), lang)); };
  const std::string cur = str(inv, "currency");
  auto pc = parse_currency(cur);
  const Currency c = pc ? *pc : Currency::kUSD;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"" + std::string(lang == "zh" ? "zh-CN" : "en") + "\"><head><meta charset=\"utf-8\">";
  h += "<title>" + t("invoice_print.title") + " " + esc(str(inv, "number")) + "</title>";
  h += "<style>@page{size:A4;margin:16mm}body{font-family:'Noto Sans','Noto Sans CJK SC',sans-serif;font-size:10pt;"
       "color:#111;max-width:178mm;margin:auto}h1{font-size:18pt;margin:0 0 4mm}table{width:100%;border-collapse:collapse;"
       "margin:3mm 0}th,td{border-bottom:1px solid #ccc;padding:1.5mm;text-align:left;vertical-align:top}"
       "td.n,th.n{text-align:right;white-space:nowrap}tr{page-break-inside:avoid}.meta td{border:none;padding:0.5mm 2mm 0.5mm 0}"
       ".tot td{font-weight:bold}.hash{font-family:monospace;font-size:8pt;word-break:break-all}"
       ".void{color:#b00;font-weight:bold}</style></head><body>\n";
  h += "<h1>" + t("invoice_print.title") + "</h1>\n<table class=\"meta\">";
  auto meta = [&](const char* code, const std::string& v) { h += "<tr><td>" + t(code) + "</td><td>" + esc(v) + "</td></tr>"; };
  meta("invoice_print.number", str(inv, "number"));
  meta("invoice_print.tenant", str(inv, "tenant"));
  meta("invoice_print.month", str(inv, "month"));
  meta("invoice_print.period", str(inv["period"], "from") + " .. " + str(inv["period"], "to"));
  meta("invoice_print.issued_at", str(inv, "issued_at"));
  meta("invoice_print.currency", cur);
  const std::string state = str(inv, "state");
  h += "<tr><td>" + t("invoice_print.state") + "</td><td" + std::string(state == "void" ? " class=\"void\"" : "") + ">" +
       t(("invoice_print.state_" + state).c_str()) + "</td></tr></table>\n";
  for (const json& s : inv.value("sections", json::array())) {
    h += "<h2>" + t("invoice_print.contract") + ": " + esc(str(s, "contract")) + "</h2>\n<table><tr><th>" +
         t("invoice_print.description") + "</th><th class=\"n\">" + t("invoice_print.quantity") + "</th><th class=\"n\">" +
         t("invoice_print.unit_price") + "</th><th class=\"n\">" + t("invoice_print.amount") + "</th></tr>";
    for (const json& l : s.value("lines", json::array()))
      h += "<tr><td>" + esc(line_description(l, lang)) + "</td><td class=\"n\">" + esc(str(l, "quantity")) + " " +
           esc(str(l, "unit")) + "</td><td class=\"n\">" + esc(str(l, "unit_price")) + " / " +
           esc(str(l, "price_unit")) + "</td><td class=\"n\">" + esc(str(l, "amount")) + "</td></tr>";
    h += "</table>\n";
  }
  const json& tot = inv.contains("totals") ? inv["totals"] : json::object();
  int64_t credited = 0;
  h += "<table>";
  h += "<tr><td>" + t("invoice_print.charges") + "</td><td class=\"n\">" + esc(str(tot, "charges")) + " " + esc(cur) + "</td></tr>";
  h += "<tr><td>" + t("invoice_print.credits") + "</td><td class=\"n\">" + esc(str(tot, "credits")) + " " + esc(cur) + "</td></tr>";
  h += "<tr class=\"tot\"><td>" + t("invoice_print.total") + "</td><td class=\"n\">" + esc(str(tot, "total")) + " " + esc(cur) +
       "</td></tr>";
  for (const json& n : credit_notes) {
    auto amount = Money::parse(str(n, "amount"), c);
    if (amount) credited += amount->micros();
    h += "<tr><td>" + t("invoice_print.credit_note") + " " + esc(str(n, "number")) + " (" + esc(str(n, "issued_at")) +
         "): " + esc(str(n, "reason")) + "</td><td class=\"n\">-" + esc(str(n, "amount")) + " " + esc(cur) + "</td></tr>";
  }
  auto total = Money::parse(str(tot, "total"), c);
  const int64_t net = (total ? total->micros() : 0) - credited;
  // What is still owed: nothing for a void invoice; a paid one was settled, so only its credit
  // notes remain, owed back to the tenant. A prepaid tenant's invoice (its `payment` when issued)
  // is charged to its balance whatever its state: whether the top-ups covered it is the balance's
  // to say (across invoices: docs/billing.md#balances), so no balance due is printed for it.
  int64_t due = net;
  const bool prepaid = str(inv, "payment") == "prepaid";
  if (state == "void") {
    due = 0;
  } else if (prepaid) {
    h += "<tr><td>" + t("invoice_print.drawn_prepaid") + "</td><td class=\"n\">" +
         esc(Money(std::max<int64_t>(net, 0), c).amount_string()) + " " + esc(cur) + "</td></tr>";
    due = std::min<int64_t>(net, 0);
  } else if (state == "paid") {
    due = -credited;
  }
  if (prepaid && state != "void" && due == 0)
    h += "</table>\n";
  else if (due < 0)
    h += "<tr class=\"tot\"><td>" + t("invoice_print.refund_due") + "</td><td class=\"n\">" +
         esc(Money(-due, c).amount_string()) + " " + esc(cur) + "</td></tr></table>\n";
  else
    h += "<tr class=\"tot\"><td>" + t("invoice_print.balance_due") + "</td><td class=\"n\">" +
         esc(Money(due, c).amount_string()) + " " + esc(cur) + "</td></tr></table>\n";
  h += "<p>" + t("invoice_print.hash_note") + "</p><p class=\"hash\">" + esc(str(inv, "hash")) + "</p>\n</body></html>\n";
  return h;
}

}  // namespace gpurent
