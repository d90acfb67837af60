"""cocotb testbenches of the memory router (spec memrouter.md)."""
