"""torch.optim optimizers on Asteria's runtime.

Each optimizer takes the hyperparameter names and defaults of its reference implementation
(torch.optim.AdamW; nikhilvyas/SOAP; Distributed Shampoo's DistributedShampoo) and the runtime's
settings (placement, staleness, publish, host_workers, nvme_dir, device_budget, host_budget,
nvme_budget, ...), also as one `config` dict of the same names. Any keyword that is not a
hyperparameter is a setting: the `asteria train` option of the same name ('_' for '-'), read by
the run schema that reads the command line, so an unknown name or a bad value is an
asteria.InputError (a ValueError) naming it. Parameters are CPU float32 tensors, dense and contiguous, each its own
set of optimizer blocks as in `asteria train`; step() runs the runtime's step over their
gradients, in place and without copies, with the GIL released.

attach(model, tokens_per_step) hands the runtime the training loop's passes through hooks (a
forward hook per module, a gradient hook per parameter): each step's plan then starts with the
loop's forward, and a layer's optimizer work (its statistics, refresh snapshots and update, into
a staged copy of the weights) runs as soon as its gradient is complete, while the rest of the
backward runs; the parameters change in step(), which hands the staged weights over. With
`trace=True, out=DIR` the run's native trace (the loop's forward and backward passes, measured,
beside the optimizer's work) is written to DIR by close(), for `asteria calibrate --from-trace`
and `asteria replay`.
"""
import os
import tempfile

import torch
from torch.utils.dlpack import to_dlpack

from ._asteria import Session
from .loop_hooks import LoopHooks, parameter_uses

_STATE_FORMAT = "asteria.torch state 1"


def _words(name, value):
    option = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return [option, "true" if value else "false"]
    return [option, str(value)]


class _RuntimeOptimizer(torch.optim.Optimizer):
    """The torch.optim front shared by the optimizers below: one runtime session over every
    parameter of every group (one set of hyperparameters: groups differing in them are refused)."""

    _kind = None  # the runtime's optimizer name

    def __init__(self, params, hyperparameters, settings, config):
        config = dict(config or {})
        for name, value in settings.items():
            if value is not None:
                config.setdefault(name, value)
        defaults = dict(hyperparameters)
        for name in list(config):
            if name in defaults:
                defaults[name] = config.pop(name)
        super().__init__(params, defaults)
        if len(self.param_groups) > 1:
            first = {k: v for k, v in self.param_groups[0].items() if k != "params"}
            for g in self.param_groups[1:]:
                if {k: v for k, v in g.items() if k != "params"} != first:
                    raise ValueError(f"{type(self).__name__}: parameter groups with different hyperparameters "
                                     "(one runtime session runs one set)")
        self._settings = config
        self._params = [p for g in self.param_groups for p in g["params"]]
        self._names = [f"param{i}" for i in range(len(self._params))]
        for i, p in enumerate(self._params):
            self._check_parameter(i, p)
        self._hooks = None  # attach()'s hooks and what they saw
        self._weight_cache = {}  # parameter index -> (its memory's address, shape, strides; capsule)
        self._uses, self._tokens_per_step = [], 0.0
        # Made now, so that a bad setting is refused here, naming it.
        self._session = self._new_session()
        self.last_step = None  # the runtime's figures of the last step (a dict)

    def _weight_capsules(self):
        """The parameters as DLPack capsules, each kept from step to step while its parameter's
        memory stays as it was (its address, shape and strides; a capsule holds its tensor, so the
        address cannot be reused meanwhile): made again when a parameter's data is replaced."""
        capsules = []
        for i, p in enumerate(self._params):
            key = (p.data_ptr(), p.shape, p.stride())
            cached = self._weight_cache.get(i)
            if cached is None or cached[0] != key:
                cached = self._weight_cache[i] = (key, to_dlpack(p.detach()))
            capsules.append(cached[1])
        return capsules

    def _new_session(self):
        return Session(self._arguments(), self._names, [list(p.shape) for p in self._params], self._uses,
                       self._tokens_per_step, self._hooks is not None)

    def add_param_group(self, param_group):
        # The runtime's session is made over the parameters given at construction.
        if getattr(self, "_session", None) is not None:
            raise ValueError(f"{type(self).__name__}: parameters cannot be added after construction (the runtime "
                             "blocks them once); make a new optimizer over every parameter")
        super().add_param_group(param_group)

    def _check_parameter(self, i, p):
        what = f"{type(self).__name__}: parameter {i} ({self._names[i]})"
        if p.is_sparse:
            raise ValueError(f"{what}: sparse tensors are not supported")
        if p.dtype != torch.float32:
            raise ValueError(f"{what}: expected float32, found {p.dtype}")
        if p.device.type != "cpu":
            raise ValueError(f"{what}: on {p.device}; this front runs CPU tensors (the device path is not bound yet)")
        if not p.is_contiguous():
            raise ValueError(f"{what}: expected a contiguous tensor")

    def _arguments(self):
        group = self.param_groups[0]
        words = ["--optimizer", self._kind]
        for name, value in self._runtime_hyperparameters(group).items():
            words += _words(name, value)
        for name, value in self._settings.items():
            words += _words(name, value)
        return words

    def _runtime_hyperparameters(self, group):
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self._session is None:
            raise RuntimeError(f"{type(self).__name__}: step() after close()")
        if self._settings.get("trace") and self._hooks is None:
            raise ValueError(f"{type(self).__name__}: trace=True records the training loop's passes: call "
                             "attach(model, tokens_per_step) before the first step")
        try:
            # The tensors as DLPack capsules, borrowed by the runtime for the step (it checks each:
            # float32, dense, host memory, the parameter's size).
            gradients = []
            for i, p in enumerate(self._params):
                g = p.grad
                if g is None:
                    raise ValueError(f"{type(self).__name__}: parameter {i} ({self._names[i]}) has no gradient")
                if g.is_sparse:
                    raise ValueError(f"{type(self).__name__}: parameter {i} ({self._names[i]}): sparse gradient")
                if self._hooks is not None:
                    self._hooks.check_gradient_unchanged(i, g)
                gradients.append(to_dlpack(g))
            weights = self._weight_capsules()
        except Exception as e:
            if self._session.step_in_flight:
                self._session.abandon_step(str(e))
            raise
        self.last_step = self._session.step(weights, gradients)
        if self._hooks is not None:
            self._hooks.step_ended()
        return loss

    def attach(self, model, tokens_per_step=0):
        """Runs each step alongside the training loop of `model` (a torch.nn.Module holding this
        optimizer's parameters): the step's plan starts with the loop's forward (under
        torch.is_grad_enabled(); evaluation under no_grad is not a step), each parameter's gradient
        hook ends its backward pass, and its optimizer work runs while the backward goes on;
        step() ends the step and hands over the new weights. The loop runs `micro_batches`
        forward and backward passes per step (gradient accumulation), leaves the gradients as the
        backward made them (clipping or unscaling them before step() is refused: the runtime has
        read them), and runs no forward with gradients outside its steps.

        tokens_per_step: tokens (or samples) one step's forward passes process in all; each
        parameter's passes then declare their device work over them (a Linear's weight as a
        matrix product, an Embedding's as a lookup, 1-d tensors elementwise), which a trace
        records for calibration and replay. Call before the first step and before
        load_state_dict()."""
        name = type(self).__name__
        if self._session is None:
            raise RuntimeError(f"{name}: attach() after close()")
        if self._hooks is not None:
            raise ValueError(f"{name}: attached already")
        if self._session.steps_done > 0 or self._loaded:
            raise ValueError(f"{name}: attach() before the first step and before load_state_dict()")
        if not isinstance(model, torch.nn.Module):
            raise ValueError(f"{name}.attach: expected a torch.nn.Module, found {type(model).__name__}")
        if not tokens_per_step >= 0:
            raise ValueError(f"{name}.attach: tokens_per_step must be >= 0, found {tokens_per_step}")
        if self._settings.get("trace") and not tokens_per_step > 0:
            raise ValueError(f"{name}.attach: trace=True needs tokens_per_step > 0 (the passes' declared work "
                             "that calibration fits)")
        self._uses = parameter_uses(model, self._params)
        self._tokens_per_step = float(tokens_per_step)
        hooks = LoopHooks(self, model)
        self._session.finish()
        self._hooks = hooks
        try:
            self._session = self._new_session()
            hooks.install()
        except Exception:
            self._hooks = None
            hooks.remove()
            raise
        return self

    def _memory(self):
        """The parameters' memory, and the gradients' (the parameters' own where none exists yet:
        saving and restoring read no gradient), as DLPack capsules."""
        weights = self._weight_capsules()
        grads = [to_dlpack(p.grad) if p.grad is not None else to_dlpack(p.detach()) for p in self._params]
        return weights, grads

    def state_dict(self):
        """The whole optimizer as the runtime's checkpoint (every block's state wherever it rests,
        refreshes in flight finished and saved with their results, the step count), its files'
        bytes in a dict that torch.save can write."""
        if self._session is None:
            raise RuntimeError(f"{type(self).__name__}: state_dict() after close()")
        if self._session.step_in_flight:
            raise RuntimeError(f"{type(self).__name__}: state_dict() between steps (a step is running: its "
                               "forward or backward has begun and step() has not ended it)")
        with tempfile.TemporaryDirectory(prefix="asteria-state-") as d:
            self._session.save(d, *self._memory())
            files = {}
            for root, _, names in os.walk(d):
                for name in names:
                    path = os.path.join(root, name)
                    with open(path, "rb") as f:
                        files[os.path.relpath(path, d)] = f.read()
        groups = [{k: v for k, v in g.items() if k != "params"} for g in self.param_groups]
        return {"format": _STATE_FORMAT, "optimizer": self._kind, "shapes": [list(p.shape) for p in self._params],
                "param_groups": groups, "settings": dict(self._settings), "files": files}

    def load_state_dict(self, state_dict):
        """Continues from a state_dict() of an optimizer of the same kind over parameters of the
        same shapes: with deterministic publication, bit for bit as the run it was taken from."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or state_dict.get("format") != _STATE_FORMAT:
            raise ValueError(f"{name}.load_state_dict: expected a state_dict() of asteria.torch ({_STATE_FORMAT})")
        if state_dict["optimizer"] != self._kind:
            raise ValueError(f"{name}.load_state_dict: the state of {state_dict['optimizer']}, not {self._kind}")
        shapes = [list(p.shape) for p in self._params]
        if len(state_dict["shapes"]) != len(shapes):
            raise ValueError(f"{name}.load_state_dict: the state holds {len(state_dict['shapes'])} parameters, "
                             f"this optimizer {len(shapes)}")
        for i, (saved, mine) in enumerate(zip(state_dict["shapes"], shapes)):
            if list(saved) != mine:
                raise ValueError(f"{name}.load_state_dict: parameter {i} ({self._names[i]}) has shape {mine}, "
                                 f"the state's has {list(saved)}")
        if self._session is not None:
            self._session.finish()
        # A session that has run no step takes the checkpoint.
        self._session = self._new_session()
        self._loaded = True
        with tempfile.TemporaryDirectory(prefix="asteria-state-") as d:
            for rel, data in state_dict["files"].items():
                path = os.path.join(d, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            self._session.restore(d, *self._memory())

    _loaded = False

    def close(self):
        """Waits for the runtime's work in flight (refreshes), writes the trace (trace=True) and
        ends the session; attach()'s hooks are removed."""
        if self._hooks is not None:
            self._hooks.remove()
        if self._session is not None:
            if self._session.step_in_flight:
                self._session.abandon_step("close() during a step")
            self._session.finish()
            self._session = None


class AdamW(_RuntimeOptimizer):
    """torch.optim.AdamW's names and defaults."""
    _kind = "adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, config=None, **settings):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay), settings, config)

    def _runtime_hyperparameters(self, g):
        return {"lr": g["lr"], "beta1": g["betas"][0], "beta2": g["betas"][1], "eps": g["eps"],
                "weight_decay": g["weight_decay"]}


class SOAP(_RuntimeOptimizer):
    """nikhilvyas/SOAP's names and defaults: SOAP(params, lr=3e-3, betas=(.95, .95), eps=1e-8,
    weight_decay=.01, precondition_frequency=10, max_precond_dim=10000)."""
    _kind = "soap"

    def __init__(self, params, lr=3e-3, betas=(0.95, 0.95), eps=1e-8, weight_decay=0.01, precondition_frequency=10,
                 max_precond_dim=10000, shampoo_beta=-1, config=None, **settings):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      precondition_frequency=precondition_frequency, max_precond_dim=max_precond_dim,
                                      shampoo_beta=shampoo_beta), settings, config)

    def _runtime_hyperparameters(self, g):
        return {"lr": g["lr"], "beta1": g["betas"][0], "beta2": g["betas"][1], "eps": g["eps"],
                "weight_decay": g["weight_decay"], "precondition_frequency": g["precondition_frequency"],
                "max_precond_dim": g["max_precond_dim"], "shampoo_beta": g["shampoo_beta"]}


class Shampoo(_RuntimeOptimizer):
    """Distributed Shampoo's names: DistributedShampoo(params, lr=1e-2, betas=(0.9, 1.0),
    epsilon=1e-12, weight_decay=0.0, max_preconditioner_dim=1024, precondition_frequency=1)."""
    _kind = "shampoo"

    def __init__(self, params, lr=1e-2, betas=(0.9, 1.0), epsilon=1e-12, weight_decay=0.0,
                 max_preconditioner_dim=1024, precondition_frequency=1, config=None, **settings):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), epsilon=epsilon, weight_decay=weight_decay,
                                      max_preconditioner_dim=max_preconditioner_dim,
                                      precondition_frequency=precondition_frequency), settings, config)

    def _runtime_hyperparameters(self, g):
        return {"lr": g["lr"], "beta1": g["betas"][0], "beta2": g["betas"][1], "eps": g["epsilon"],
                "weight_decay": g["weight_decay"], "max_precond_dim": g["max_preconditioner_dim"],
                "precondition_frequency": g["precondition_frequency"]}


class KLShampoo(SOAP):
    """KL-Shampoo with SOAP's names (the KL-Methods reference's)."""
    _kind = "kl-shampoo"


class Muon(_RuntimeOptimizer):
    """Muon: momentum orthogonalized by Newton-Schulz (AdamW for tensors of order <= 1)."""
    _kind = "muon"

    def __init__(self, params, lr=0.02, momentum=0.95, nesterov=True, weight_decay=0.0, config=None, **settings):
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay),
                         settings, config)

    def _runtime_hyperparameters(self, g):
        return {"lr": g["lr"], "beta1": g["momentum"], "nesterov": g["nesterov"], "weight_decay": g["weight_decay"]}
