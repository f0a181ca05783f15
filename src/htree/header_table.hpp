// The header table of one level from its keys: the nodes stably sorted by
// key (side links), and per distinct key its count and first place there
// (Procedure HTABLE). On the host a counting sort; the GPU form sorts with
// CUB and run-length encodes.
#pragma once

#include <cstdint>

#include "htree/htree.hpp"

namespace gpuolap::htree {

// Fills level.side_links and header_* from level.key; keys below `cardinality`.
void fill_header_table(Level& level, std::uint32_t cardinality);

}  // namespace gpuolap::htree
