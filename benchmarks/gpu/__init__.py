"""The GPU check: throughput, MFU, token budgets, out-of-memory halving, bitwise batch invariance."""
