"""Reference optimizer benchmarks: the host (CPU) optimizer math of DeepSpeed, PyTorch,
Distributed Shampoo and nikhilvyas/SOAP, measured side by side with bench_optimizer_step.

Each module is run in its own process (``python -m bench.references.<module>``) so that the
thread count is fixed before torch is imported. See README.md.
"""
