"""Asteria: second-order optimizers (Shampoo, SOAP, KL-Shampoo, Muon, AdamW) on a runtime that
places their state across device, host and NVMe and refreshes their preconditioners on host
threads under a staleness bound. `asteria.torch` holds the torch.optim front."""
from ._asteria import InputError, Session

__all__ = ["InputError", "Session"]
