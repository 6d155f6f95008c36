"""attach()'s side of asteria.torch: how a model's forward uses each parameter (what the runtime
declares its passes cost), and the hooks through which a training loop drives the runtime's step
pass by pass."""
import torch
from torch.utils.dlpack import to_dlpack


def parameter_uses(model, params):
    """How the model's forward uses each parameter, as the runtime declares its work: a Linear's
    (or a convolution's) weight a matrix product, an Embedding's a lookup, others of order >= 2 a
    matrix product, of order <= 1 elementwise."""
    owner = {}
    for module in model.modules():
        for pname, p in module.named_parameters(recurse=False):
            owner.setdefault(id(p), (module, pname))
    uses = []
    for p in params:
        module, pname = owner.get(id(p), (None, None))
        if isinstance(module, torch.nn.Embedding) and pname == "weight":
            uses.append("lookup")
        elif p.dim() >= 2:
            uses.append("matmul")
        else:
            uses.append("elementwise")
    return uses


class LoopHooks:
    """attach()'s hooks: the model's forward pre-hook starts a step (its first micro-batch) or the
    next micro-batch, each module's forward hook reports its parameters' forward passes, the
    model's forward hook every parameter's, and each parameter's gradient hook (after its
    gradient is accumulated) its backward pass, with the gradient."""

    def __init__(self, optimizer, model):
        self.optimizer, self.model = optimizer, model
        self.index = {id(p): i for i, p in enumerate(optimizer._params)}
        self.handles, self.accumulators = [], []
        self.micro_batch = -1
        self.seen = {}  # parameter -> (gradient tensor, its version) as its hook saw it

    def session(self):
        return self.optimizer._session

    def install(self):
        self.handles.append(self.model.register_forward_pre_hook(self._forward_begins))
        self.handles.append(self.model.register_forward_hook(self._model_forward_done))
        for module in self.model.modules():
            own = [self.index[id(p)] for p in module.parameters(recurse=False) if id(p) in self.index]
            if own and module is not self.model:
                self.handles.append(module.register_forward_hook(self._module_forward_done(own)))
        for i, p in enumerate(self.optimizer._params):
            if not p.requires_grad:
                continue  # no gradient will come: step() says so, naming it
            if hasattr(p, "register_post_accumulate_grad_hook"):  # torch >= 2.1
                self.handles.append(p.register_post_accumulate_grad_hook(self._gradient_done(i)))
            else:  # earlier: the hook of the parameter's gradient accumulator node
                accumulator = p.expand_as(p).grad_fn.next_functions[0][0]
                hook = self._gradient_done(i)
                self.handles.append(accumulator.register_hook(lambda *_, hook=hook, p=p: hook(p)))
                self.accumulators.append(accumulator)  # the node lives as long as this reference

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles, self.accumulators = [], []

    def _forward_begins(self, module, inputs):
        if not torch.is_grad_enabled():
            return  # evaluation: not a step
        s = self.session()
        if not s.step_in_flight:
            s.begin_step(self.optimizer._weight_capsules())
            self.micro_batch, self.seen = 0, {}
            return
        self.micro_batch += 1
        if self.micro_batch >= s.micro_batches:
            reason = (f"{type(self.optimizer).__name__}: forward pass {self.micro_batch + 1} of a step set for "
                      f"micro_batches={s.micro_batches} (accumulating gradients over k passes needs micro_batches=k; "
                      "a forward with gradients outside the loop needs torch.no_grad(); after a forward or backward "
                      "that failed part-way, make a new optimizer or load a state_dict into one)")
            s.abandon_step(reason)
            raise RuntimeError(reason)

    def _model_forward_done(self, module, inputs, output):
        s = self.session()
        if torch.is_grad_enabled() and s.step_in_flight:
            for i in range(len(self.optimizer._params)):
                s.forward_done(i, self.micro_batch)

    def _module_forward_done(self, own):
        def done(module, inputs, output):
            s = self.session()
            if torch.is_grad_enabled() and s.step_in_flight:
                for i in own:
                    s.forward_done(i, self.micro_batch)
        return done

    def _gradient_done(self, i):
        def done(p):
            s = self.session()
            if not s.step_in_flight or p.grad is None:
                return
            g = p.grad
            if not (g.dtype == torch.float32 and g.device.type == "cpu" and not g.is_sparse and g.is_contiguous()):
                return  # step() refuses it, naming the parameter
            self.seen[i] = (g, g._version)
            s.backward_done(i, self.micro_batch, to_dlpack(g))
        return done

    def check_gradient_unchanged(self, i, g):
        seen = self.seen.get(i)
        if seen is not None and (seen[0] is not g or seen[1] != g._version):
            raise ValueError(f"{type(self.optimizer).__name__}: parameter {i} ({self.optimizer._names[i]}): its "
                             "gradient changed after its backward hook handed it to the runtime (clipped, unscaled "
                             "or replaced before step()); an attached optimizer reads each gradient as the backward "
                             "leaves it")

    def step_ended(self):
        self.micro_batch, self.seen = -1, {}

