//! The OpenFlow agent and the switch's loop (owned by helper `agent`).
