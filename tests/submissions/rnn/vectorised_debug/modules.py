import numpy as np

DEBUG = True


def _log(*args):
    if DEBUG:
        print("[modules]", *args)


class Module:
    def __init__(self):
        self.params = {}
        self.grads = {}
        self.cache = None

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, grad_out):
        raise NotImplementedError

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def _get_cache(self):
        if self.cache is None:
            raise RuntimeError(type(self).__name__ + ": forward must run before backward")
        return self.cache


class Linear(Module):
    def __init__(self, in_features, out_features, rng):
        super().__init__()
        if not isinstance(in_features, (int, np.integer)) or isinstance(in_features, bool) or in_features < 1:
            raise ValueError("in_features must be an integer >= 1")
        if not isinstance(out_features, (int, np.integer)) or isinstance(out_features, bool) or out_features < 1:
            raise ValueError("out_features must be an integer >= 1")
        if rng is None:
            rng = np.random.default_rng()
        scale = 1.0 / np.sqrt(in_features)
        self.params["W"] = (2.0 * rng.random((out_features, in_features)) - 1.0) * scale
        self.params["b"] = np.zeros(out_features)

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        W = self.params["W"]
        if x.ndim != 2 or x.shape[-1] != W.shape[1]:
            raise ValueError("Linear: input shape %s incompatible with W %s" % (x.shape, W.shape))
        _log("Linear.forward", x.shape, "->", (x.shape[0], W.shape[0]))
        self.cache = x
        return np.einsum("ni,oi->no", x, W) + self.params["b"]

    def backward(self, grad_out):
        x = self._get_cache()
        g = np.asarray(grad_out, dtype=np.float64)
        _log("Linear.backward", g.shape)
        self.grads["W"] = np.einsum("no,ni->oi", g, x)
        self.grads["b"] = np.einsum("no->o", g)
        return np.einsum("no,oi->ni", g, self.params["W"])


class Sigmoid(Module):
    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        ex = np.exp(x[~pos])
        out[~pos] = ex / (1.0 + ex)
        self.cache = out
        return out

    def backward(self, grad_out):
        s = self._get_cache()
        return np.asarray(grad_out, dtype=np.float64) * s * (1.0 - s)


class Tanh(Module):
    def forward(self, x):
        self.cache = np.tanh(np.asarray(x, dtype=np.float64))
        return self.cache

    def backward(self, grad_out):
        t = self._get_cache()
        return np.asarray(grad_out, dtype=np.float64) * (1.0 - t ** 2)


class Softmax(Module):
    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        z = x - x.max(axis=-1, keepdims=True)
        e = np.exp(z)
        y = e / e.sum(axis=-1, keepdims=True)
        self.cache = y
        return y

    def backward(self, grad_out):
        y = self._get_cache()
        g = np.asarray(grad_out, dtype=np.float64)
        # Jacobian-vector product with J_n = diag(y_n) - y_n y_n^T
        dot = np.einsum("...k,...k->...", y, g)
        return y * (g - dot[..., None])


class CrossEntropy(Module):
    def forward(self, probs, targets):
        probs = np.asarray(probs, dtype=np.float64)
        targets = np.asarray(targets)
        if probs.ndim != 2 or targets.ndim != 1 or targets.shape[0] != probs.shape[0]:
            raise ValueError("CrossEntropy: probs (N, K) and targets (N,) expected, got %s and %s"
                             % (probs.shape, targets.shape))
        if targets.size:
            if targets.dtype.kind not in "iu":
                raise ValueError("CrossEntropy: targets must be integer class ids")
            if targets.min() < 0 or targets.max() >= probs.shape[1]:
                raise ValueError("CrossEntropy: target ids must be in [0, %d)" % probs.shape[1])
        targets = targets.astype(np.int64)
        onehot = np.zeros_like(probs)
        onehot[np.arange(len(targets)), targets] = 1.0
        self.cache = (probs, onehot)
        picked = np.einsum("nk,nk->n", probs, onehot)
        with np.errstate(divide="ignore"):
            return float(-np.log(picked).sum())

    def backward(self, grad_out=1.0):
        probs, onehot = self._get_cache()
        out = np.zeros_like(probs)
        mask = onehot > 0
        with np.errstate(divide="ignore"):
            out[mask] = -float(grad_out) / probs[mask]
        return out
