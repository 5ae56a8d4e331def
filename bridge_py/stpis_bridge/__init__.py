"""stpis_bridge: a gRPC server that runs gymnasium MuJoCo episodes under linear policies.

The layers, each importable on its own:

* ``envs``: env id resolution (paper aliases), descriptions, ``gym.make`` with kwargs.
* ``rollout``: one episode under a linear policy; a pure function of (env, policy, seed).
* ``pool``: worker processes that run episodes, one task at a time per worker.
* ``servicer``: the gRPC servicer; request validation and status codes.
* ``fast``: the batched backend for the v5 paper tasks.
* ``server``: configuration, health, reflection, signals and the ready line.

Only ``servicer`` and ``server`` import gRPC.
"""

__all__ = ["__version__"]

# The bridge's version; pyproject.toml's version says the same (a test holds them equal).
__version__ = "0.1.0"
