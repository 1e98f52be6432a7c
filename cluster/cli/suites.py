"""Commands about suites and what is registered: build, retrieval-eval, list."""

from __future__ import annotations

import json
from pathlib import Path
from types import TracebackType
from typing import Annotated

import typer
from rich.markup import escape
from rich.status import Status
from rich.table import Table
from rich.text import Text

from undertow.cluster import api
from undertow.cluster.cli.common import Format, console, info, plain
from undertow.cluster.cli.errors import check_format, user_errors
from undertow.cluster.report import print_report_table
from undertow.cluster.report.text import printable

Fields = Annotated[
    list[str] | None,
    typer.Argument(metavar="[FIELD=VALUE]...", help="the family's suite fields, e.g. spider=PATH seed=1"),
]


class Spinner:
    """A spinner with the current step of a long job (``api.Hooks.stage``), gone when the job ends."""

    def __init__(self) -> None:
        self.status: Status | None = None

    def show(self, text: str) -> None:
        text = escape(printable(text, one_line=True))  # names a family or a model: text, not markup
        if self.status is None:
            self.status = console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def __enter__(self) -> Spinner:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


@user_errors
def build(
    family: Annotated[str, typer.Argument(help="a registered family (see `undertow list`) or module:attribute")],
    fields: Fields = None,
    out: Annotated[Path, typer.Option("--out", help="folder to write the suite to")] = Path("suite"),
    docs: Annotated[
        str | None,
        typer.Option(
            "--docs",
            metavar="template|model",
            help="tool documentation: the family's template, or written by the --docs-model-url endpoint (checked, "
            "corrected up to 3 times)",
        ),
    ] = None,
    docs_model_url: Annotated[
        str | None,
        typer.Option("--docs-model-url", help="the OpenAI-compatible endpoint that documents the tools (--docs model)"),
    ] = None,
    docs_model_name: Annotated[str, typer.Option("--docs-model-name", help="model id it serves")] = "default",
    spider: Annotated[
        Path | None,
        typer.Option("--spider", help="a Spider-format folder to compile (the same as the field spider=DIR)"),
    ] = None,
) -> None:
    """Write a suite folder from a family's source data (the same build a sweep makes on first use)."""
    with Spinner() as spinner:
        built = api.build(
            family,
            fields,
            out=out,
            docs=docs,
            docs_model_url=docs_model_url,
            docs_model_name=docs_model_name,
            spider=spider,
            hooks=api.Hooks(stage=spinner.show),
        )
    if built.docs is not None:
        for line in built.docs.lines():
            console.print(plain(line, one_line=True), highlight=False)  # why a doc was refused: the model's words
    for table in built.tables:
        print_report_table(table, console)
    info(f"wrote a {built.family} suite to {out}")


@user_errors
def import_(
    family: Annotated[
        str, typer.Argument(help="a family that reads a benchmark's released files (see `undertow list`)")
    ],
    path: Annotated[Path, typer.Argument(help="the folder of released files")],
    out: Annotated[Path, typer.Option("--out", help="folder to write the suite to")] = Path("suite"),
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            help="the authors' published outputs (<Setting>/<model>_auto_eval[_qaq]/answers.json): also write them "
            "into the run store as one reference run",
        ),
    ] = None,
    store: Annotated[str, typer.Option("--store", help="run store folder for the reference run")] = "runs",
) -> None:
    """Write a suite folder from a benchmark's released files; entries that cannot be read are listed, not fatal.
    With --results, the authors' outputs become one reference run (for report --layout and compare)."""
    with Spinner() as spinner:
        built = api.import_suite(
            family, path, out=out, hooks=api.Hooks(stage=spinner.show), results=results, store=store
        )
    for table in built.tables:
        print_report_table(table, console)
    info(f"wrote a {built.family} suite to {out}")
    reference = built.reference
    if reference is None:
        return
    for label, items in reference.listed.items():
        if items:
            info(f"{len(items)} {label}:")
            for item in items:
                console.print(plain(f"  {item}", one_line=True), highlight=False)
    models = ", ".join(reference.models)
    info(f"wrote {reference.episodes} imported episodes of {models} as reference run {reference.run_id}")


@user_errors
def retrieval_eval(
    suite_name: Annotated[str, typer.Option("--suite", help="a built suite folder, or a family name")],
    fields: Annotated[
        list[str] | None,
        typer.Argument(metavar="[FIELD=VALUE]...", help="with a family: its suite fields, e.g. spider=PATH"),
    ] = None,
    modes: Annotated[str, typer.Option("--modes", help="comma-separated: bm25,dense,hybrid,lexical")] = (
        "bm25,dense,hybrid,lexical"
    ),
    ks: Annotated[str, typer.Option("--k", help="comma-separated cut-offs")] = "1,3,9",
    model: Annotated[str, typer.Option("--model", help="sentence-transformers model (name or path)")] = (
        "all-MiniLM-L6-v2"
    ),
    device: Annotated[str, typer.Option("--device", help="cpu | cuda")] = "cpu",
    index: Annotated[str, typer.Option("--index", help="faiss index: flat | ivf | hnsw")] = "flat",
    format: Format = "table",
) -> None:
    """Recall@k of each scenario's solution functions when the query is the task text, per search mode."""
    check_format(format)
    found = api.retrieval_eval(suite_name, fields, modes=modes, ks=ks, model=model, device=device, index=index)
    if format == "json":
        print(json.dumps(found.as_dict(), indent=2))
        return
    table = Table(
        title=Text(f"{found.suite}: {found.tools} tools, {found.scenarios} scenarios, query = task text"),
        title_justify="left",
    )
    table.add_column("mode")
    for k in found.cutoffs:
        table.add_column(f"hit@{k}", justify="right")
        table.add_column(f"recall@{k}", justify="right")
    table.add_column("build s", justify="right")
    for mode, row in found.modes.items():
        cells = [f"{100 * row['at'][k][m]:.1f}%" for k in found.cutoffs for m in ("hit", "recall")]
        table.add_row(mode, *cells, f"{row['build_s']:.2f}")
    console.print(table)


@user_errors
def list_builtins() -> None:
    """List registered benchmark families, setting presets and built-in policies."""
    found = api.catalog()
    console.print("[bold]families[/bold] (a suite config names one with family: NAME):")
    width = max(len(item.name) for item in [*found.families, *found.settings])  # one column for both lists
    for family in found.families:
        info(f"  {family.name:{width}s}  {family.description}")
    console.print("[bold]settings[/bold]:")
    for setting in found.settings:
        info(f"  {setting.name:{width}s}  {setting.description}")
    console.print(f"[bold]policies[/bold]: {escape(', '.join(found.policies))}")


@user_errors
def doctor() -> None:
    """Show what this machine can run: versions, vLLM, and the isolation of the CodeAct sandbox."""
    table = Table("check", "", "detail", box=None)
    for check in api.doctor():
        table.add_row(check.name, "[green]ok[/green]" if check.ok else "[yellow]![/yellow]", plain(check.detail))
    console.print(table)


suites_app = typer.Typer(help="Inspect suites.", no_args_is_help=True)


@suites_app.command(name="show")
@user_errors
def show(
    suite: Annotated[
        str, typer.Argument(help="a family name (see `undertow list`), module:attribute, or a suite folder")
    ],
    fields: Fields = None,
) -> None:
    """Count a suite's scenarios by what its family records about them (domain, category, fault kind,
    persistence, ...), and print the total."""
    with Spinner() as spinner:
        overview = api.suite_overview(suite, fields, hooks=api.Hooks(stage=spinner.show))
    console.print(plain(f"{overview.label} ({overview.family}): {overview.tools} tools"), highlight=False)
    for name, values in overview.counts.items():
        table = Table(title=f"by {name.replace('_', ' ')}", title_justify="left")
        table.add_column(name)
        table.add_column("scenarios", justify="right")
        for value, count in values.items():
            table.add_row(plain(value, one_line=True), str(count))
        console.print(table)
    if overview.faults:
        persistences = sorted({p for row in overview.faults.values() for p in row})
        table = Table(title="fault kind x persistence", title_justify="left")
        table.add_column("fault kind")
        for persistence in persistences:
            table.add_column(persistence, justify="right")
        for kind, row in overview.faults.items():
            table.add_row(plain(kind, one_line=True), *(str(row.get(p, 0)) for p in persistences))
        console.print(table)
    for report in overview.report:
        print_report_table(report, console)
    console.print(f"{overview.scenarios} scenarios", highlight=False)
