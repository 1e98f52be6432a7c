"""The FAIL-TaLMs judge as its authors ran it, the defaults of a ``failtalms`` suite's ``judge`` (built from the
family, or a built folder of it: :class:`FailTalmsFolder`): 3 votes sampled at
temperature 1.0 (each with its own seed), a vote re-asked up to 3 times while its reply opens with no verdict, the
reply read as their code reads it (its first characters: "Pass/Fail: Fail" is a pass). The paper's prose says 5
votes (``k: 5``); undertow's reader, which looks past markup and labels, is ``reader: robust``. The grading itself
is ``undertow.scoring.failtalms.judge``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from undertow.env_core.families import FolderSuite, JudgeModel


class FailTalmsJudge(JudgeModel):
    """A ``failtalms`` suite's grader model: the fields of every judge, with the authors' protocol as defaults, and
    how its replies are read."""

    temperature: float = Field(
        default=1.0, ge=0, le=2, allow_inf_nan=False, description="1.0 as the authors sampled; votes differ by it"
    )
    k: int = Field(default=3, ge=1, le=101, description="votes per episode: 3 as the authors' code, 5 as the prose")
    retries: int = Field(default=3, ge=0, le=10, description="re-asks of a vote whose reply opens with no verdict")
    reader: Literal["authors", "robust"] = Field(
        default="authors",
        description="how a reply is read: authors (it starts with pass / fail, any case, as their code reads it) "
        "or robust (markup, quotes and a leading label such as 'Pass/Fail:' skipped)",
    )


class FailTalmsFolder(FolderSuite):
    """A built ``failtalms`` folder (``undertow import failtalms`` writes one) named by ``path``: a folder suite
    whose ``judge`` has the authors' defaults too (the family's ``folder_config``)."""

    judge: FailTalmsJudge | None = Field(
        default=None,
        description="the grader model, with the authors' protocol as its defaults: 3 votes at temperature 1.0, "
        "each re-asked up to 3 times, read as their code reads them (reader: robust for undertow's reader)",
    )
