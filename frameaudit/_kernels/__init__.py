"""numpy kernels for the computations a query engine cannot do well (see docs/concepts.md)."""
