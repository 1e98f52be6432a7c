"""Doctor: what this installation and machine can run (versions, vLLM, the isolation of the CodeAct sandbox)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from undertow.cluster.api.planning import VLLM_INSTALL
from undertow.cluster.plan import versions
from undertow.env_core.sandbox import SandboxConfig, available_isolation


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool  # False: something a user may need is missing or weaker than the default
    detail: str


def doctor() -> list[Check]:
    """What this installation and machine give: versions, vLLM, and the isolation of the CodeAct sandbox (probed:
    it starts a kernel)."""
    found = versions()
    checks = [
        Check("undertow", True, found["undertow"]),
        Check("python", True, f"{found['python']} ({found['platform']})"),
    ]
    checks.append(Check("ray", found["ray"] != "not installed", found["ray"]))
    vllm = importlib.util.find_spec("vllm") is not None
    checks.append(
        Check(
            "vllm",
            vllm,
            "installed: models of kind vllm can be served here" if vllm else f"not installed: {VLLM_INSTALL}",
        )
    )
    isolation = available_isolation()
    default = SandboxConfig().require
    checks.append(
        Check(
            "sandbox",
            isolation.satisfies(default),
            f"{isolation.level}: {isolation.detail}"
            + (
                ""
                if isolation.satisfies(default)
                else "; CodeAct runs here only with sandbox.require: rlimits (SECURITY.md)"
            ),
        )
    )
    return checks
