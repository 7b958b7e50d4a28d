//! The traffic generator and receiver of `pharos bench datapath` (to come).
