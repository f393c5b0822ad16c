// A reserved node that fails is capacity its seller does not deliver (docs/market.md#defaults):
// when the scheduler sees a node leave service (marked unavailable or drained), every settled market
// trade holding it for a window in progress gets a default of that node's GPUs from then to the
// window's end — on the trade and on its commitment in the buyer's contract, so the invoice refunds
// them with compensation; when the node is back, those defaults end then. Defaults carry the node
// (`node`), which makes both calls idempotent (the scheduler re-reads node states after a restart).
// Functions of the control loop, inside its transaction.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

Status market_node_down(StoreTx& tx, const std::string& node_id, const std::string& why, TimeMs now);
Status market_node_up(StoreTx& tx, const std::string& node_id, TimeMs now);

}  // namespace gpurent
